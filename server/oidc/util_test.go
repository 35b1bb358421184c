package oidc_test

import "strconv"

func itoa(i int) string { return strconv.Itoa(i) }
