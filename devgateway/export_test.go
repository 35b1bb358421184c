package devgateway

import "regexp"

// Rewrite is the gateway's header_to_metadata regex_value_rewrite, for black-box tests:
// pattern and substitution in Envoy's (RE2) form.
func Rewrite(pattern, substitution, value string) (string, bool) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", false
	}
	subst, ok := goSubstitution(substitution)
	if !ok {
		return "", false
	}
	return rewrite(re, subst, value), true
}
