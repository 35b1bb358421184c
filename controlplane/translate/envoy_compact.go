package translate

import (
	"google.golang.org/protobuf/proto"
)

// compact is m as the cache keeps and hands it on: its field 1 (the name of a virtual
// host, the cluster name of a ClusterLoadAssignment), and the rest of its
// deterministic serialization as unknown fields, which takes a fraction of the memory
// of the messages themselves (BENCHMARKS.md has the figures). The xDS server serves the bytes
// (protobuf emits unknown fields verbatim, after field 1: the same bytes as the full
// message), and decodes them when it checks what is new to it (xds.Expand), as do the
// admin views. m must be new and not shared: its field 1 is cleared to serialize the
// rest.
func compact[M proto.Message](m M) M {
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByNumber(1)
	has, first := r.Has(fd), r.Get(fd)
	r.Clear(fd)
	rest, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic("translate: " + err.Error()) // marshalling a well-formed message cannot fail
	}
	out := r.New()
	if has {
		out.Set(fd, first)
	}
	out.SetUnknown(rest)
	return out.Interface().(M)
}
