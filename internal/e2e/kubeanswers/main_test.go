// Package kubeanswers holds end-to-end tests of answers kpipe gives as
// kube-apiserver gives them: the deprecation warnings of deprecated kinds,
// the managedFields of Secrets written with stringData, and the pods'
// log, exec, attach and portforward subresources for a pod whose node
// cannot be reached. They use client-go, raw HTTP and the real kubectl.
package kubeanswers

import (
	"testing"

	"github.com/kpipe/kpipe/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }
