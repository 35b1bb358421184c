package snapshots_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

func TestDevHandlerListsEachClientsIdentity(t *testing.T) {
	h := snapshots.DevHandler(snapshots.Options{
		Stages: func() pipeline.Stages { return pipeline.Stages{} },
		Clients: func() []xds.Client {
			return []xds.Client{{Role: xds.RoleExtauth, Node: "ex-1", Identity: "spiffe://td/ns/gh/role/extauth"}}
		},
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/clients", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 || !strings.Contains(string(body), `"identity": "spiffe://td/ns/gh/role/extauth"`) {
		t.Fatalf("GET /clients = %d %s", rec.Code, body)
	}
}
