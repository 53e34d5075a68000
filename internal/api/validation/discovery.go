package validation

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

func init() {
	register(true,
		func(s *discoveryv1.EndpointSlice) field.ErrorList { return validateEndpointSlice(s, nil) },
		validateEndpointSlice, nil)
}

const (
	maxTopologyLabels = 16
	maxAddresses      = 100
	maxSlicePorts     = 20000
	maxEndpoints      = 1000
	maxZoneHints      = 8
	maxNodeHints      = 8
)

var supportedAddressTypes = sets.New(discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN)

// validateEndpointSlice serves create (old nil) and update. In v1.37 the
// addressType and endpoints[*].addresses rules are declarative at beta, so
// their errors come last, except where an update left the field unchanged.
func validateEndpointSlice(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	// kube checks metadata as on create, updates included; the generic
	// update checks cover the rest.
	errs := objectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	errs = append(errs, validateAddressType(s, old)...)
	errs = append(errs, validateSlicePorts(s.Ports, field.NewPath("ports"))...)
	// Unchanged endpoints passed older, looser rules; keep accepting them.
	if old == nil || !apiequality.Semantic.DeepEqual(old.Endpoints, s.Endpoints) {
		errs = append(errs, validateSliceEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	}
	return errs
}

func validateAddressType(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	p := field.NewPath("addressType")
	changed := old == nil || s.AddressType != old.AddressType
	var errs field.ErrorList
	if s.AddressType == "" {
		e := field.Required(p, "")
		if changed {
			e = e.MarkBeta()
		}
		errs = append(errs, e)
	} else if !supportedAddressTypes.Has(s.AddressType) {
		e := field.NotSupported(p, s.AddressType, sets.List(supportedAddressTypes))
		// On update the declarative immutability check stops before the
		// enum check, so the handwritten error stays in place.
		if old == nil {
			e = e.MarkBeta()
		}
		errs = append(errs, e)
	}
	if old != nil && changed {
		errs = append(errs, field.Invalid(p, nil, apimachineryvalidation.FieldImmutableErrorMsg).MarkBeta())
	}
	return errs
}

func validateSliceEndpoints(eps []discoveryv1.Endpoint, addrType discoveryv1.AddressType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	tooMany := len(eps) > maxEndpoints
	if tooMany {
		errs = append(errs, field.TooMany(p, len(eps), maxEndpoints))
	}
	for i, ep := range eps {
		ip := p.Index(i)
		ap := ip.Child("addresses")
		// Declarative, checked even when the list is too long.
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(ap, "").MarkBeta())
		} else if len(ep.Addresses) > maxAddresses {
			errs = append(errs, field.TooMany(ap, len(ep.Addresses), maxAddresses).MarkBeta())
		}
		if tooMany {
			continue
		}
		for j, a := range ep.Addresses {
			errs = append(errs, validateSliceAddress(a, addrType, ap, ap.Index(j))...)
		}
		if ep.NodeName != nil {
			errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, *ep.NodeName, ip.Child("nodeName"))...)
		}
		tp := ip.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			errs = append(errs, field.TooMany(tp, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, tp)...)
		if _, ok := ep.DeprecatedTopology[corev1.LabelTopologyZone]; ok {
			// kube moves this key to zone in conversion and reports it as
			// an internal error if it survives.
			errs = append(errs, field.InternalError(tp.Key(corev1.LabelTopologyZone), fmt.Errorf("reserved key was not removed in conversion")))
		}
		if ep.Hostname != nil {
			errs = append(errs, dns1123Label(*ep.Hostname, ip.Child("hostname"))...)
		}
		if ep.Hints != nil {
			errs = append(errs, validateHints(ep.Hints, ip.Child("hints"))...)
		}
	}
	return errs
}

func validateSliceAddress(a string, addrType discoveryv1.AddressType, listPath, p *field.Path) field.ErrorList {
	switch addrType {
	case discoveryv1.AddressTypeIPv4:
		if e := legacyIP(p, a, nil); len(e) > 0 {
			return e
		}
		var errs field.ErrorList
		if !netutils.IsIPv4String(a) {
			errs = append(errs, field.Invalid(listPath, a, "must be an IPv4 address"))
		}
		return append(errs, validateEndpointIP(a, p)...)
	case discoveryv1.AddressTypeIPv6:
		if e := validation.IsValidIP(p, a); len(e) > 0 {
			return e
		}
		var errs field.ErrorList
		if !netutils.IsIPv6String(a) {
			errs = append(errs, field.Invalid(listPath, a, "must be an IPv6 address"))
		}
		return append(errs, validateEndpointIP(a, p)...)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, a)
	}
	return nil
}

var supportedSlicePortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

func validateSlicePorts(ports []discoveryv1.EndpointPort, p *field.Path) field.ErrorList {
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxSlicePorts)}
	}
	var errs field.ErrorList
	var names []string
	for i, port := range ports {
		ip := p.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, dns1123Label(name, ip.Child("name"))...)
		}
		if slices.Contains(names, name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), name))
		} else {
			names = append(names, name)
		}
		if port.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !supportedSlicePortProtocols.Has(*port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), *port.Protocol, sets.List(supportedSlicePortProtocols)))
		}
		if port.AppProtocol != nil {
			errs = append(errs, qualifiedName(*port.AppProtocol, ip.Child("appProtocol"))...)
		}
	}
	return errs
}

func validateHints(h *discoveryv1.EndpointHints, p *field.Path) field.ErrorList {
	zp := p.Child("forZones")
	if len(h.ForZones) > maxZoneHints {
		return field.ErrorList{field.TooMany(zp, len(h.ForZones), maxZoneHints)}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, z := range h.ForZones {
		np := zp.Index(i).Child("name")
		if seen.Has(z.Name) {
			errs = append(errs, field.Duplicate(np, z.Name))
		} else {
			seen.Insert(z.Name)
		}
		for _, msg := range validation.IsValidLabelValue(z.Name) {
			errs = append(errs, field.Invalid(np, z.Name, msg))
		}
	}
	fp := p.Child("forNodes")
	if len(h.ForNodes) > maxNodeHints {
		return append(errs, field.TooMany(fp, len(h.ForNodes), maxNodeHints))
	}
	seen = sets.New[string]()
	for i, n := range h.ForNodes {
		np := fp.Index(i).Child("name")
		if seen.Has(n.Name) {
			errs = append(errs, field.Duplicate(np, n.Name))
		} else {
			seen.Insert(n.Name)
		}
		errs = append(errs, nameErrs(apimachineryvalidation.NameIsDNSSubdomain, n.Name, np)...)
	}
	return errs
}
