module example.com/loadplugin

go 1.26.0

require gatehouse.dev/gatehouse v0.0.0
