package api

import utilrand "k8s.io/apimachinery/pkg/util/rand"

// GenerateName appends five random characters to base, as kube's
// SimpleNameGenerator does, keeping the result within 63 characters.
func GenerateName(base string) string {
	const maxNameLength, randomLength = 63, 5
	if len(base) > maxNameLength-randomLength {
		base = base[:maxNameLength-randomLength]
	}
	return base + utilrand.String(randomLength)
}
