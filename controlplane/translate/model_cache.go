package translate

import (
	"slices"

	"gatehouse.dev/gatehouse/internal/chunked"
)

// modelCache remembers what was built from each model value of the last run.
type modelCache[M comparable, B any] struct {
	models chunked.List[M]
	out    []B
	built  map[M]B
	// added and removed are the model values of the last update that were built, or
	// are gone.
	added, removed []M
	// builtOnly is set where the caller reads built, added and removed, not what
	// update returns (ExtAuthConfigs, clusters): an edit then copies no slice of
	// results.
	builtOnly bool
}

// update returns what models build to, in order, and whether it differs from the last
// run. Only new model values (and those rebuild selects) are built.
func (c *modelCache[M, B]) update(models chunked.List[M], build func(M) B, rebuild func(M) bool) ([]B, bool) {
	c.added, c.removed = c.added[:0], c.removed[:0]
	if c.built == nil {
		c.built = map[M]B{}
	}
	if models.Len() == c.models.Len() && rebuild == nil {
		return c.updateInPlace(models, build)
	}
	// Slices shifted (or some values must be rebuilt): match by value.
	keep := make(map[M]bool, models.Len())
	var out []B
	if !c.builtOnly {
		out = make([]B, models.Len())
	}
	for i, m := range models.All() {
		keep[m] = true
		b, ok := c.built[m]
		if !ok || (rebuild != nil && rebuild(m)) {
			b = build(m)
			c.built[m] = b
			c.added = append(c.added, m)
		}
		if out != nil {
			out[i] = b
		}
	}
	for m := range c.built {
		if !keep[m] {
			delete(c.built, m)
			c.removed = append(c.removed, m)
		}
	}
	changed := len(c.added) > 0 || len(c.removed) > 0 || models.Len() != c.models.Len()
	c.models, c.out = models, out
	return out, changed
}

// updateInPlace handles lists of the same length: work only where they differ (the
// common case of an edit), found by chunked.Changes, which looks only into the chunks
// the two lists do not share (an edge shares all but those its edit touched).
func (c *modelCache[M, B]) updateInPlace(models chunked.List[M], build func(M) B) ([]B, bool) {
	var olds, news []M
	var at []int
	chunked.Changes(c.models, models, func(i int, old, m M) {
		olds, news = append(olds, old), append(news, m)
		at = append(at, i)
	})
	if len(news) == 0 {
		c.models = models
		return c.out, false
	}
	var out []B
	if !c.builtOnly {
		out = slices.Clone(c.out)
	}
	for _, o := range olds {
		if !slices.Contains(news, o) {
			delete(c.built, o)
			c.removed = append(c.removed, o)
		}
	}
	for k, m := range news {
		b, ok := c.built[m]
		if !ok {
			b = build(m)
			c.built[m] = b
			c.added = append(c.added, m)
		}
		if out != nil {
			out[at[k]] = b
		}
	}
	c.models, c.out = models, out
	return out, true
}
