//go:build unix

package v1

import (
	"fmt"
	"os"
	"syscall"
)

// ReadFile reads the resource file path into buf (reused; grown as needed) and returns
// its bytes. Only a regular file is read (a symlink is followed first): a FIFO would
// block the reader forever and a device such as /dev/zero never ends, so either is an
// error, found without reading or waiting. A file past MaxFileBytes is refused without
// reading more than one byte past the limit.
func ReadFile(path string, buf []byte) ([]byte, error) { return ReadFileShort(path, buf, false) }

// ReadFileShort is ReadFile; with shortIsEnd (path is on a filesystem where a short
// read of a regular file means its end, as on local disks) it saves the read that would
// return nothing.
func ReadFileShort(path string, buf []byte, shortIsEnd bool) ([]byte, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		// O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one.
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		return err
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("%s: not a regular file (%s); only regular files are read", path, fileType(st.Mode))
	}
	if err := checkSize(path, st.Size); err != nil {
		return nil, err
	}
	data := buf[:0]
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		room := min(cap(data), MaxFileBytes+1) - len(data)
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Read(fd, data[len(data):len(data)+room])
			return err
		})
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		data = data[:len(data)+n]
		if err := checkSize(path, int64(len(data))); err != nil {
			return nil, err // it grew while being read
		}
		if n <= 0 || (shortIsEnd && n < room) {
			return data, nil
		}
	}
}

func fileType(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "a FIFO"
	case syscall.S_IFCHR:
		return "a character device"
	case syscall.S_IFBLK:
		return "a block device"
	case syscall.S_IFDIR:
		return "a folder"
	case syscall.S_IFSOCK:
		return "a socket"
	}
	return "not a regular file"
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}
