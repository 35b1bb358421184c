package source

import apiv1 "gatehouse.dev/gatehouse/api/v1"

// fileReader reads whole resource files into one buffer it reuses (apiv1.ReadFile: only
// regular files, at most apiv1.MaxFileBytes, never waiting on a FIFO), so reading the
// many small files of a start allocates no buffer per file. What read returns is valid
// until the next read.
//
// With shortIsEnd (the file is on a filesystem where shortReadIsEnd), a read that
// returns less than it asked for is the end of the file, which saves the read that
// would return nothing.
type fileReader struct{ buf []byte }

func (r *fileReader) read(path string, shortIsEnd bool) ([]byte, error) {
	if r.buf == nil {
		r.buf = make([]byte, 0, 16<<10)
	}
	data, err := apiv1.ReadFileShort(path, r.buf, shortIsEnd)
	if err != nil {
		return nil, err
	}
	r.buf = data
	return data, nil
}
