package defaults

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// pullPolicyFor is the pull policy kube defaults for an image: Always when
// the image asks for the "latest" tag, explicitly or by having neither tag
// nor digest; IfNotPresent otherwise, including for a reference kube cannot
// parse (validation is left to reject it).
func pullPolicyFor(image string) corev1.PullPolicy {
	if tag, digest, ok := parseImage(image); ok && (tag == "latest" || tag == "" && digest == "") {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// The grammar of an image reference, as the Docker distribution reference
// library (which kube uses) accepts it:
//
//	reference := name [ ":" tag ] [ "@" digest ]
//	name      := [ domain "/" ] path
//	domain    := host [ ":" port ]
//	host      := domain-component { "." domain-component } | "[" ipv6 "]"
//	path      := path-component { "/" path-component }
const (
	refPathComponent   = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	refPath            = refPathComponent + `(?:/` + refPathComponent + `)*`
	refDomainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refHost            = `(?:` + refDomainComponent + `(?:\.` + refDomainComponent + `)*|\[[a-fA-F0-9:]+\])`
	refDomain          = refHost + `(?::[0-9]+)?`
	refTag             = `[\w][\w.-]{0,127}`
	refDigest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`

	// maxImagePathLength bounds the path (the name without its domain).
	maxImagePathLength = 255
)

var (
	referenceRE = regexp.MustCompile(`^((?:` + refDomain + `/)?` + refPath + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	nameRE      = regexp.MustCompile(`^(?:(` + refDomain + `)/)?(` + refPath + `)$`)
	// A bare 64-hex string is an image ID, not a name.
	imageIDRE = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// The digest algorithms kube's image parsing can verify, with the
	// length of their lowercase hex encoding.
	digestHexLen = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
	lowerHexRE   = regexp.MustCompile(`^[a-f0-9]+$`)
)

// parseImage returns an image reference's tag and digest the way kube's
// image parsing normalises it (a familiar name such as "nginx" becomes
// "docker.io/library/nginx"), and false when kube would fail to parse it.
func parseImage(image string) (tag, digest string, ok bool) {
	if imageIDRE.MatchString(image) {
		return "", "", false
	}
	domain, rest := splitImageDomain(image)
	repo := rest
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		repo = rest[:i]
	}
	if strings.ToLower(repo) != repo {
		return "", "", false
	}
	m := referenceRE.FindStringSubmatch(domain + "/" + rest)
	if m == nil {
		return "", "", false
	}
	if n := nameRE.FindStringSubmatch(m[1]); n == nil || len(n[2]) > maxImagePathLength {
		return "", "", false
	}
	tag, digest = m[2], m[3]
	if digest != "" && !validDigest(digest) {
		return "", "", false
	}
	return tag, digest, true
}

// splitImageDomain separates the registry from the rest of an image
// reference, filling in Docker Hub (and its "library/" namespace for
// single-element names) when the first element is not a registry.
func splitImageDomain(image string) (domain, rest string) {
	const hub = "docker.io"
	first, after, found := strings.Cut(image, "/")
	switch {
	case !found:
		// A single element ("nginx:1.25") is always a Hub name, never a host.
		return hub, "library/" + image
	case first == "localhost":
		domain, rest = first, after
	case first == "index.docker.io":
		domain, rest = hub, after
	case strings.ContainsAny(first, ".:"), strings.ToLower(first) != first:
		// A dot, a port or upper case can only be a registry host.
		domain, rest = first, after
	default:
		domain, rest = hub, image
	}
	if domain == hub && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return domain, rest
}

// validDigest reports whether a digest names an algorithm kube can check
// and carries a well-formed lowercase hex value of that algorithm's size.
func validDigest(d string) bool {
	alg, hex, _ := strings.Cut(d, ":")
	n, ok := digestHexLen[alg]
	return ok && len(hex) == n && lowerHexRE.MatchString(hex)
}
