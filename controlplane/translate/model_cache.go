package translate

import "slices"

// modelCache remembers what was built from each model value of the last run.
type modelCache[M comparable, B any] struct {
	models []M
	out    []B
	built  map[M]B
	// added and removed are the model values of the last update that were built, or
	// are gone.
	added, removed []M
	// builtOnly is set where the caller reads built, added and removed, not what
	// update returns (ExtAuthConfigs, clusters): an edit then copies no slice of
	// results (at 10,000 services, 80 KB an edit).
	builtOnly bool
}

// update returns what models build to, in order, and whether it differs from the last
// run. Only new model values (and those rebuild selects) are built.
func (c *modelCache[M, B]) update(models []M, build func(M) B, rebuild func(M) bool) ([]B, bool) {
	c.added, c.removed = c.added[:0], c.removed[:0]
	if c.built == nil {
		c.built = map[M]B{}
	}
	if len(models) == len(c.models) && rebuild == nil {
		return c.updateInPlace(models, build)
	}
	// Slices shifted (or some values must be rebuilt): match by value.
	keep := make(map[M]bool, len(models))
	var out []B
	if !c.builtOnly {
		out = make([]B, len(models))
	}
	for i, m := range models {
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
	changed := len(c.added) > 0 || len(c.removed) > 0 || len(models) != len(c.models)
	c.models, c.out = models, out
	return out, changed
}

// updateInPlace handles slices of the same length: one pointer comparison per value,
// and work only where they differ (the common case of an edit).
func (c *modelCache[M, B]) updateInPlace(models []M, build func(M) B) ([]B, bool) {
	var olds, news []M
	var at []int
	for i, m := range models {
		if m != c.models[i] {
			olds, news = append(olds, c.models[i]), append(news, m)
			at = append(at, i)
		}
	}
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
