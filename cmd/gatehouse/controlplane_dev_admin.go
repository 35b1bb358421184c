package main

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// defaultDevAdmin is the deprecated developer API's address.
const defaultDevAdmin = "127.0.0.1:10010"

// devAdmin runs the deprecated developer API while Settings spec.devMode is true.
type devAdmin struct {
	log  zerolog.Logger
	addr string
	h    http.Handler

	mu  sync.Mutex
	srv *http.Server
}

// settings opens or closes the port to follow devMode. It is called by the pipeline
// whenever the Settings in effect change.
func (d *devAdmin) settings(s translate.Settings) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case s.DevMode && d.srv == nil:
		lis, err := net.Listen("tcp", d.addr)
		if err != nil {
			d.log.Error().Err(err).Str("listen", d.addr).Msg("devMode: the deprecated developer API cannot listen")
			return
		}
		srv := &http.Server{Handler: d.h, ReadHeaderTimeout: 10 * time.Second}
		d.srv = srv
		go func() {
			if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error().Err(err).Msg("devMode: developer API")
			}
		}()
		d.log.Warn().Str("listen", lis.Addr().String()).Msg("devMode: the deprecated developer API serves (use the admin server's /snapshots/* instead)")
	case !s.DevMode && d.srv != nil:
		_ = d.srv.Close()
		d.srv = nil
		d.log.Info().Str("listen", d.addr).Msg("devMode off: the developer API is closed")
	}
}

// close stops the developer API when the control plane stops.
func (d *devAdmin) close() { d.settings(translate.Settings{}) }

func newDevAdmin(log zerolog.Logger, addr string, o snapshots.Options) *devAdmin {
	return &devAdmin{log: log, addr: addr, h: snapshots.DevHandler(o)}
}
