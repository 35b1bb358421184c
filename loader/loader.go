// Package loader finds, checks and opens plugin .so files and turns a step's config
// into a running pluginapi.AuthService.
package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"plugin"
	"reflect"
	"strings"
	"sync"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Loader opens plugins from one directory.
type Loader struct {
	dir string

	mu     sync.Mutex
	opened map[string]*plugin.Plugin // by file path
}

// New returns a Loader for the plugin directory dir.
func New(dir string) *Loader {
	return &Loader{dir: dir, opened: make(map[string]*plugin.Plugin)}
}

// Dir is the plugin directory.
func (l *Loader) Dir() string { return l.dir }

// Path returns the path of file inside the plugin directory, refusing names that
// would leave it.
func (l *Loader) Path(file string) (string, error) {
	if file == "" || file != filepath.Base(file) || file == "." || file == ".." || strings.ContainsRune(file, os.PathSeparator) {
		return "", fmt.Errorf("loader: plugin file name %q must be a plain file name inside %s", file, l.dir)
	}
	return filepath.Join(l.dir, file), nil
}

// Open returns the ExtAuthPlugin that file exports as symbol.
func (l *Loader) Open(file, symbol string) (pluginapi.ExtAuthPlugin, error) {
	path, err := l.Path(file)
	if err != nil {
		return nil, err
	}
	p, err := l.open(path)
	if err != nil {
		return nil, err
	}
	return Lookup(p, path, symbol)
}

func (l *Loader) open(path string) (*plugin.Plugin, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.opened[path]; ok {
		return p, nil
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("loader: %s: no such plugin file; is the plugin image's init container copying it into %s?", path, l.dir)
		}
		return nil, fmt.Errorf("loader: %w", err)
	}
	p, err := plugin.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loader: %s: cannot open plugin: %w", path, err)
	}
	l.opened[path] = p
	return p, nil
}

var extAuthPluginType = reflect.TypeFor[pluginapi.ExtAuthPlugin]()

// Lookup finds symbol in p and checks it implements pluginapi.ExtAuthPlugin. Go
// plugins export variables as pointers, so both a variable of an implementing type and
// a variable holding a pointer are accepted.
func Lookup(p *plugin.Plugin, path, symbol string) (pluginapi.ExtAuthPlugin, error) {
	sym, err := p.Lookup(symbol)
	if err != nil {
		return nil, fmt.Errorf("loader: %s: no exported symbol %q; set exportedSymbolName to the name of the variable the plugin's main package exports", path, symbol)
	}
	if ep, ok := sym.(pluginapi.ExtAuthPlugin); ok {
		return ep, nil
	}
	if v := reflect.ValueOf(sym); v.Kind() == reflect.Pointer && !v.IsNil() {
		if ep, ok := v.Elem().Interface().(pluginapi.ExtAuthPlugin); ok && ep != nil {
			return ep, nil
		}
	}
	if _, isFunc := sym.(func()); isFunc || reflect.TypeOf(sym).Kind() == reflect.Func {
		return nil, fmt.Errorf("loader: %s: symbol %q is a function (%T); export a variable implementing pluginapi.ExtAuthPlugin", path, symbol, sym)
	}
	return nil, fmt.Errorf("loader: %s: symbol %q has type %T, which does not implement %s (NewConfigInstance and GetAuthService)",
		path, symbol, sym, extAuthPluginType)
}
