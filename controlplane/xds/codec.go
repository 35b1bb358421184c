package xds

import (
	"fmt"
	"slices"
	"sync"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// responseCodec is gRPC's proto codec, except for a discovery response that carries a
// large resource (a route configuration with thousands of virtual hosts). gRPC's codec
// serializes a message into one new buffer, which would copy those bytes for every
// response to every client. This codec hands the transport such a response in
// pieces instead: the framing, serialized as usual, and each large resource's bytes as
// they are.
//
// That is safe because the xDS server never modifies bytes it has handed out (every
// publish builds a resource's serialization anew; wireRoutes copies from the bytes
// served before, it does not write into them), and gRPC only reads a message's pieces
// until it has written them. The pieces joined are the bytes proto.Marshal gives for
// the response (TestResponseCodecIsProtoMarshal).
//
// A delta response with many resources is sent in pieces too: each small resource as
// its record (the resources field's tag and length, and the Resource's serialization),
// made once per *discovery.Resource. The server builds one of those per resource
// version and shares it between every response (deltaSet.wire), so a client's first
// state costs a list of references, not a copy of every resource. The sets say which
// Resources may be shared and when one is no longer served (records).
type responseCodec struct {
	encoding.CodecV2
	records *records
}

// newResponseCodec is gRPC's registered proto codec with large resources sent in place.
func newResponseCodec() responseCodec {
	return responseCodec{encoding.GetCodecV2(protocodec.Name), sharedRecords}
}

// manyFrom is how many resources a delta response holds from which its small ones are
// sent as shared records.
const manyFrom = 16

// inPlace is the size from which a resource's bytes are sent as they are. Below it,
// copying costs less than a piece of its own.
const inPlace = 32 << 10

// Field numbers of the discovery messages' resources.
const (
	deltaResourcesField = 2 // DeltaDiscoveryResponse.resources
	resourceAnyField    = 2 // Resource.resource
	sotwResourcesField  = 2 // DiscoveryResponse.resources
	anyValueField       = 2 // Any.value
)

func (c responseCodec) Marshal(v any) (mem.BufferSlice, error) {
	var out mem.BufferSlice
	var err error
	switch m := v.(type) {
	case *discovery.DeltaDiscoveryResponse:
		var shared func(*discovery.Resource) (mem.Buffer, error)
		if len(m.GetResources()) >= manyFrom {
			shared = c.records.of
		}
		out, err = inPieces(m, deltaResourcesField, m.GetResources(), (*discovery.Resource).GetResource, shared)
	case *discovery.DiscoveryResponse:
		out, err = inPieces(m, sotwResourcesField, m.GetResources(), func(a *anypb.Any) *anypb.Any { return a }, nil)
	}
	if out == nil && err == nil {
		return c.CodecV2.Marshal(v)
	}
	return out, err
}

// inPieces is m, whose repeated field holds items, in pieces, or nil when no item's
// Any is large and there is no shared record. anyOf is an item's Any: the item itself
// in a state-of-the-world response, its resource field in a delta one. shared, when
// set, gives a small item's record (its field tag and length, and its serialization),
// or nil for an item copied as usual.
func inPieces[E proto.Message](m proto.Message, field protoreflect.FieldNumber, items []E, anyOf func(E) *anypb.Any, shared func(E) (mem.Buffer, error)) (mem.BufferSlice, error) {
	if shared == nil && !slices.ContainsFunc(items, func(e E) bool { return isLarge(anyOf(e)) }) {
		return nil, nil
	}
	before, after, err := around(m, field)
	if err != nil {
		return nil, err
	}
	p := &pieces{cur: before}
	for _, e := range items {
		if shared != nil && !isLarge(anyOf(e)) {
			rec, err := shared(e)
			if err != nil {
				return nil, err
			}
			if rec != nil {
				p.flush()
				p.out = append(p.out, rec)
				continue
			}
		}
		p.cur = protowire.AppendTag(p.cur, field, protowire.BytesType)
		if err := p.item(e, anyOf(e)); err != nil {
			return nil, err
		}
	}
	p.cur = append(p.cur, after...)
	return p.done(), nil
}

// records are the records of the *discovery.Resource values the delta sets serve, made
// when first sent: a set offers each Resource it builds and forgets it once the
// resource changes or goes. A Resource not offered, or forgotten while a response still
// carries it, is copied into its response as before.
type records struct {
	mu sync.RWMutex
	m  map[*discovery.Resource]mem.Buffer // nil until first sent
}

// sharedRecords are every delta set's, for the codec.
var sharedRecords = &records{m: map[*discovery.Resource]mem.Buffer{}}

// offer lets r be sent as a shared record: r is never modified from now on.
func (rs *records) offer(r *discovery.Resource) {
	rs.mu.Lock()
	rs.m[r] = nil
	rs.mu.Unlock()
}

// forget drops r's record.
func (rs *records) forget(r *discovery.Resource) {
	rs.mu.Lock()
	delete(rs.m, r)
	rs.mu.Unlock()
}

// of is r's record in a delta response: the resources field's tag and length, and r's
// serialization; nil when r was not offered.
func (rs *records) of(r *discovery.Resource) (mem.Buffer, error) {
	rs.mu.RLock()
	b, offered := rs.m[r]
	rs.mu.RUnlock()
	if b != nil || !offered {
		return b, nil
	}
	rec, err := appendMessage(protowire.AppendTag(nil, deltaResourcesField, protowire.BytesType), r)
	if err != nil {
		return nil, err
	}
	b = mem.SliceBuffer(rec)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if old, offered := rs.m[r]; !offered {
		return b, nil // forgotten meanwhile: sent, not kept
	} else if old != nil {
		return old, nil
	}
	rs.m[r] = b
	return b, nil
}

// item writes the length and serialization of e, whose Any is a: e as it is when a is
// small, a in place when e is a, and otherwise e's other fields around a in place.
func (p *pieces) item(e proto.Message, a *anypb.Any) error {
	var err error
	switch {
	case !isLarge(a):
		p.cur, err = appendMessage(p.cur, e)
		return err
	case e == proto.Message(a):
		p.cur = protowire.AppendVarint(p.cur, uint64(sizeOfAny(a)))
		p.any(a)
		return nil
	}
	before, after, err := around(e, resourceAnyField)
	if err != nil {
		return err
	}
	anySize := sizeOfAny(a)
	p.cur = protowire.AppendVarint(p.cur, uint64(len(before)+protowire.SizeTag(resourceAnyField)+protowire.SizeBytes(anySize)+len(after)))
	p.cur = append(p.cur, before...)
	p.cur = protowire.AppendTag(p.cur, resourceAnyField, protowire.BytesType)
	p.cur = protowire.AppendVarint(p.cur, uint64(anySize))
	p.any(a)
	p.cur = append(p.cur, after...)
	return nil
}

// isLarge says whether a is sent in place: its value is large and it has nothing
// beyond its type URL and value, which any writes.
func isLarge(a *anypb.Any) bool {
	return len(a.GetValue()) >= inPlace && len(a.ProtoReflect().GetUnknown()) == 0
}

// sizeOfAny is the size of a's serialization (type URL and value; isLarge(a)).
func sizeOfAny(a *anypb.Any) int {
	n := protowire.SizeTag(anyValueField) + protowire.SizeBytes(len(a.GetValue()))
	if a.GetTypeUrl() != "" {
		n += protowire.SizeTag(1) + protowire.SizeBytes(len(a.GetTypeUrl()))
	}
	return n
}

// around serializes the fields of m numbered below field (before) and above it (after),
// each as proto.Marshal would, which writes known fields in the order of their numbers
// and unknown fields last. Messages with unknown fields are not split: they are
// refused, which the responses the server builds never have.
func around(m proto.Message, field protoreflect.FieldNumber) (before, after []byte, err error) {
	src := m.ProtoReflect()
	if len(src.GetUnknown()) > 0 {
		return nil, nil, fmt.Errorf("xds: %s has unknown fields", src.Descriptor().FullName())
	}
	lo, hi := src.New(), src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Number() < field:
			lo.Set(fd, v)
		case fd.Number() > field:
			hi.Set(fd, v)
		}
		return true
	})
	if before, err = proto.Marshal(lo.Interface()); err != nil {
		return nil, nil, err
	}
	if after, err = proto.Marshal(hi.Interface()); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// appendMessage appends m's length and serialization to b.
func appendMessage(b []byte, m proto.Message) ([]byte, error) {
	size := proto.Size(m)
	b = protowire.AppendVarint(b, uint64(size))
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(b, m)
}

// pieces collects a serialization: bytes written (cur) and bytes referenced.
type pieces struct {
	out mem.BufferSlice
	cur []byte
}

// any writes a's type URL and the header of its value, then references the value.
func (p *pieces) any(a *anypb.Any) {
	if a.GetTypeUrl() != "" {
		p.cur = protowire.AppendTag(p.cur, 1, protowire.BytesType)
		p.cur = protowire.AppendString(p.cur, a.GetTypeUrl())
	}
	p.cur = protowire.AppendTag(p.cur, anyValueField, protowire.BytesType)
	p.cur = protowire.AppendVarint(p.cur, uint64(len(a.GetValue())))
	p.flush()
	p.out = append(p.out, mem.SliceBuffer(a.GetValue()))
}

func (p *pieces) flush() {
	if len(p.cur) > 0 {
		p.out = append(p.out, mem.SliceBuffer(p.cur))
		p.cur = nil
	}
}

func (p *pieces) done() mem.BufferSlice {
	p.flush()
	return p.out
}
