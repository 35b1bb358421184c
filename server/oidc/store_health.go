package oidc

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// openConns is every Redis connection of a session store not closed yet.
var openConns sync.Map // *redisConn → struct{}

var (
	storeUpDesc = prometheus.NewDesc("gatehouse_extauth_session_store_up",
		"1 when the OIDC session store's Redis at address answered a PING at this scrape, 0 when it did not within 1 s.",
		[]string{"address"}, nil)
	storePingDesc = prometheus.NewDesc("gatehouse_extauth_session_store_ping_seconds",
		"Round trip of this scrape's PING to the OIDC session store's Redis at address, when it answered.",
		[]string{"address"}, nil)
)

// storeHealthTimeout bounds a scrape's PING of one Redis.
const storeHealthTimeout = time.Second

// storeHealth reports, at each scrape, whether each Redis an OIDC step keeps sessions
// in answers a PING, and how fast: one PING per address (one or several Cluster nodes,
// as configured), over the connection of one of the stores using it.
type storeHealth struct{}

func (storeHealth) Describe(ch chan<- *prometheus.Desc) { ch <- storeUpDesc; ch <- storePingDesc }

func (storeHealth) Collect(ch chan<- prometheus.Metric) {
	byAddress := map[string]*redisConn{}
	openConns.Range(func(k, _ any) bool {
		c := k.(*redisConn)
		byAddress[strings.Join(c.opt.InitAddress, ",")] = c
		return true
	})
	var wg sync.WaitGroup
	for addr, c := range byAddress {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), storeHealthTimeout)
			defer cancel()
			start := time.Now()
			if c.ping(ctx) != nil {
				ch <- prometheus.MustNewConstMetric(storeUpDesc, prometheus.GaugeValue, 0, addr)
				return
			}
			took := time.Since(start)
			ch <- prometheus.MustNewConstMetric(storeUpDesc, prometheus.GaugeValue, 1, addr)
			ch <- prometheus.MustNewConstMetric(storePingDesc, prometheus.GaugeValue, took.Seconds(), addr)
		}()
	}
	wg.Wait()
}
