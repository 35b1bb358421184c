package integration_test

import (
	"encoding/base64"
	"strconv"
	"strings"
)

func itoa(i int) string { return strconv.Itoa(i) }

func base64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
