package xds

import (
	"encoding/binary"
	"hash/maphash"
)

// A client that reconnects usually announces exactly what is served (nothing changed
// while it was away). Rather than looking every announced name up, the set compares
// a digest of the announcement with one of what it serves: the number of entries and
// two sums, over the entries, of keyed 64-bit hashes of name and version. The keys are
// made per process, so no client can make two different sets sum the same but by a
// chance of about 2^-128; any difference sends the announcement through the entry by
// entry comparison (allAnnounced).

// digest is a set of (name, version) pairs in brief.
type digest struct {
	n    int
	a, b uint64
}

var digestSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// add puts the pair (name, version) into d.
func (d *digest) add(name, version []byte) {
	d.n++
	d.a += pairHash(digestSeeds[0], name, version)
	d.b += pairHash(digestSeeds[1], name, version)
}

// pairHash hashes name and version, the name's length first so that no two pairs
// write the same bytes.
func pairHash(seed maphash.Seed, name, version []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(name)))
	h.Write(n[:])
	h.Write(name)
	h.Write(version)
	return h.Sum64()
}

// digest is a's digest.
func (a announced) digest() digest {
	var d digest
	a.each(d.add)
	return d
}

// servedDigest is the digest of what the set serves (w.mu held), made once per change;
// ok is false when a version cannot be had.
func (w *deltaSet) servedDigest() (digest, bool) {
	if w.digestMade && w.digestAt == w.seq {
		return w.digest, w.digestOK
	}
	var d digest
	ok := true
	for _, r := range w.resources {
		v := r.version()
		if v == "" {
			ok = false
			break
		}
		d.add([]byte(r.name), []byte(v))
	}
	w.digest, w.digestOK, w.digestAt, w.digestMade = d, ok, w.seq, true
	return d, ok
}
