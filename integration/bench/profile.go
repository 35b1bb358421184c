package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// profile loads gatehouse with the requests of load (allow, cookie, ...) while
// fetching a CPU profile from its admin server, and writes the profile to file.
func (l *loader) profile(ctx context.Context, gh *server, load, file string) error {
	if gh.admin == "" {
		return fmt.Errorf("gatehouse was started without --admin-listen")
	}
	seconds := max(int((l.duration-2*time.Second)/time.Second), 1)
	errc := make(chan error, 1)
	go func() {
		_, _, err := l.ghzRun(ctx, gh, load, l.duration, 0)
		errc <- err
	}()
	select { // let the load reach its steady state
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
	perr := fetchProfile(ctx, "http://"+gh.admin+"/debug/pprof/profile?seconds="+strconv.Itoa(seconds), file)
	if err := <-errc; err != nil {
		return err
	}
	return perr
}

func fetchProfile(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pprofTop is `go tool pprof -top -cum` of the profile in file: where the time goes, callers first.
func pprofTop(ctx context.Context, file string) (string, error) {
	return output(ctx, "", "go", "tool", "pprof", "-top", "-cum", "-nodecount=45", file)
}
