package main

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/testsupport"
)

func TestMain(m *testing.M) { testsupport.Main(m) }
