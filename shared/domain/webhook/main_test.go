package webhook_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
