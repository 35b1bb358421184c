package xds_test

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/durationpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// TestPublishChangedLooksAtTheNamesListed: the names listed in changed are
// published, added or removed; a type listed looks at nothing else; after a refused
// Publish what changed is relative to a call that was not published, so the next
// Publish compares every name.
func TestPublishChangedLooksAtTheNamesListed(t *testing.T) {
	svc1, svc2, svc3 := xdstest.ID(1), xdstest.ID(2), xdstest.ID(3)
	withTimeout := func(r xds.Resources, id string, d time.Duration) {
		c := xdstest.Cluster(id)
		c.ConnectTimeout = durationpb.New(d)
		r[xds.ClusterType][id] = c
	}
	s := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	r := xdstest.Proxy(4)
	if err := s.PublishChanged(xds.DefaultProxyRole, r, nil); err != nil {
		t.Fatal(err)
	}
	version := func(id string) string { return s.Version(xds.DefaultProxyRole, xds.ClusterType, id) }

	// svc1 and svc2 edited, only svc1 listed: svc2 is not looked at.
	before2 := version(svc2)
	r = xdstest.Clone(r)
	withTimeout(r, svc1, 3*time.Second)
	withTimeout(r, svc2, 4*time.Second)
	before1 := version(svc1)
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{xds.ClusterType: {svc1}}); err != nil {
		t.Fatal(err)
	}
	if version(svc1) == before1 {
		t.Error("the cluster listed as changed kept its version")
	}
	if version(svc2) != before2 {
		t.Error("a cluster not listed as changed was looked at")
	}

	// A refused Publish (svc3 invalid), then svc3 fixed and nothing listed: the
	// Publish after a refused one compares in full, so svc2's edit is found too.
	r = xdstest.Clone(r)
	withTimeout(r, svc3, -time.Second)
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{xds.ClusterType: {svc3}}); err == nil {
		t.Fatal("an invalid cluster was published")
	}
	r = xdstest.Clone(r)
	withTimeout(r, svc3, 5*time.Second)
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{xds.ClusterType: {}}); err != nil {
		t.Fatal(err)
	}
	if version(svc2) == before2 || version(svc3) == "" {
		t.Error("the Publish after a refused one did not compare every name")
	}

	// A name listed and new is added; listed and gone, removed.
	extra := xdstest.ID(99)
	r = xdstest.Clone(r)
	r[xds.ClusterType][extra] = xdstest.Cluster(extra)
	r[xds.EndpointType][extra] = xdstest.Endpoints(extra, "127.0.0.2", 9999)
	both := xds.Changed{xds.ClusterType: {extra}, xds.EndpointType: {extra}}
	if err := s.PublishChanged(xds.DefaultProxyRole, r, both); err != nil {
		t.Fatal(err)
	}
	if version(extra) == "" {
		t.Error("a cluster listed and new is not served")
	}
	r = xdstest.Clone(r)
	delete(r[xds.ClusterType], extra)
	delete(r[xds.EndpointType], extra)
	if err := s.PublishChanged(xds.DefaultProxyRole, r, both); err != nil {
		t.Fatal(err)
	}
	if v := version(extra); v != "" {
		t.Errorf("a cluster listed and gone is still served at version %q", v)
	}
}

// TestPublishChangedTakesAMapEditedInPlace: the map handed before, edited in place
// since, is looked at for the names listed as changed (the translation hands its maps
// so, to spare a copy of ten thousand entries per edit), and, like any map handed
// again, taken as unchanged by a Publish that is not told what changed.
func TestPublishChangedTakesAMapEditedInPlace(t *testing.T) {
	svc1, svc2 := xdstest.ID(1), xdstest.ID(2)
	s := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	r := xdstest.Proxy(3)
	if err := s.PublishChanged(xds.DefaultProxyRole, r, nil); err != nil {
		t.Fatal(err)
	}
	version := func(id string) string { return s.Version(xds.DefaultProxyRole, xds.ClusterType, id) }
	before1, before2 := version(svc1), version(svc2)

	c := xdstest.Cluster(svc1)
	c.ConnectTimeout = durationpb.New(3 * time.Second)
	r[xds.ClusterType][svc1] = c // the same map
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{xds.ClusterType: {svc1}}); err != nil {
		t.Fatal(err)
	}
	if version(svc1) == before1 {
		t.Error("a cluster edited in place and listed as changed kept its version")
	}

	c = xdstest.Cluster(svc2)
	c.ConnectTimeout = durationpb.New(4 * time.Second)
	r[xds.ClusterType][svc2] = c
	if err := s.Publish(xds.DefaultProxyRole, r); err != nil {
		t.Fatal(err)
	}
	if version(svc2) != before2 {
		t.Error("Publish looked into a map it was handed before")
	}
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{xds.ClusterType: {svc2}}); err != nil {
		t.Fatal(err)
	}
	if version(svc2) == before2 {
		t.Error("a cluster edited in place and listed as changed kept its version")
	}

	// A refused call (svc1 invalid), then svc1 fixed in place and nothing listed: the
	// call after a refused one compares in full, the map it was handed before too.
	before1 = version(svc1)
	c = xdstest.Cluster(svc1)
	c.ConnectTimeout = durationpb.New(-time.Second)
	r[xds.ClusterType][svc1] = c
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{xds.ClusterType: {svc1}}); err == nil {
		t.Fatal("an invalid cluster was published")
	}
	c = xdstest.Cluster(svc1)
	c.ConnectTimeout = durationpb.New(5 * time.Second)
	r[xds.ClusterType][svc1] = c
	if err := s.PublishChanged(xds.DefaultProxyRole, r, xds.Changed{}); err != nil {
		t.Fatal(err)
	}
	if version(svc1) == before1 {
		t.Error("after a refused call, a cluster fixed in place in the same map was not published")
	}
}
