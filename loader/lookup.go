package loader

import (
	"fmt"
	"plugin"
	"reflect"
	"unicode"
	"unicode/utf8"

	"gatehouse.dev/gatehouse/pluginapi"
)

var extAuthPluginType = reflect.TypeFor[pluginapi.ExtAuthPlugin]()

// Lookup finds symbol in p and checks it implements pluginapi.ExtAuthPlugin. Go
// plugins export variables as pointers, so both a variable of an implementing type and
// a variable holding a pointer are accepted.
func Lookup(p *plugin.Plugin, path, symbol string) (pluginapi.ExtAuthPlugin, error) {
	ep, problem, fix := lookup(p, symbol)
	if problem != "" {
		return nil, fmt.Errorf("loader: %s: %s; fix: %s", path, problem, fix)
	}
	return ep, nil
}

// lookup returns the plugin, or what is wrong with the symbol and how to fix it.
func lookup(p *plugin.Plugin, symbol string) (ep pluginapi.ExtAuthPlugin, problem, fix string) {
	sym, err := p.Lookup(symbol)
	if err != nil && !Exportable(symbol) {
		return nil, unexportableProblem(symbol), unexportableFix(symbol, nil)
	}
	if err != nil {
		return nil, fmt.Sprintf("no exported symbol %q", symbol),
			fmt.Sprintf("export a package-level variable %s from the plugin's main package (`var %s pluginapi.ExtAuthPlugin = myPlugin{}`), or set exportedSymbolName (verify: --symbol) to the name of the variable it exports", symbol, symbol)
	}
	if ep, ok := sym.(pluginapi.ExtAuthPlugin); ok {
		return ep, "", ""
	}
	if v := reflect.ValueOf(sym); v.Kind() == reflect.Pointer && !v.IsNil() {
		if ep, ok := v.Elem().Interface().(pluginapi.ExtAuthPlugin); ok && ep != nil {
			return ep, "", ""
		}
		if v.Elem().Kind() == reflect.Interface && v.Elem().IsNil() {
			return nil, fmt.Sprintf("symbol %q is a nil %s", symbol, v.Elem().Type()),
				fmt.Sprintf("assign a value: `var %s pluginapi.ExtAuthPlugin = myPlugin{}`", symbol)
		}
	}
	if reflect.TypeOf(sym).Kind() == reflect.Func {
		return nil, fmt.Sprintf("symbol %q is a function (%T), not a variable", symbol, sym),
			fmt.Sprintf("export a variable instead: `var %s pluginapi.ExtAuthPlugin = myPlugin{}`", symbol)
	}
	return nil, fmt.Sprintf("symbol %q has type %T, which does not implement %s (NewConfigInstance and GetAuthService)", symbol, sym, extAuthPluginType),
		fmt.Sprintf("declare it as `var %s pluginapi.ExtAuthPlugin = myPlugin{}`, where myPlugin has the methods NewConfigInstance(context.Context) (any, error) and GetAuthService(context.Context, any) (pluginapi.AuthService, error)", symbol)
}

// Exportable reports whether Go can export a package-level name: only those that start
// with an upper-case letter. exportedSymbolName defaults to the step's name, which is
// often lower case and then can never be found.
func Exportable(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

func unexportableProblem(symbol string) string {
	return fmt.Sprintf("no exported symbol %q: Go exports only names that start with an upper-case letter, so no plugin can export %q", symbol, symbol)
}

// unexportableFix says which exportedSymbolName to set: one the plugin exports, when
// they are known, or else the conventional Plugin.
func unexportableFix(symbol string, exports []string) string {
	name := "Plugin"
	if len(exports) > 0 {
		name = exports[0]
	}
	return fmt.Sprintf("set exportedSymbolName: %s in the step (verify: --symbol %s); it defaults to the step's name, %q. The plugin must export that variable: `var %s pluginapi.ExtAuthPlugin = myPlugin{}`", name, name, symbol, name)
}
