package httpapi

import "github.com/danielgtaylor/huma/v2"

// Every file of operations has the same shape: a small handler type (xAPI)
// holding Deps, and per operation a method returning its huma.Operation
// (xOp) next to the method handling it. Its registerX lists one entry per
// operation, in the document's order:
//
//	registerAll(api,
//		func(api huma.API) { huma.Register(api, h.getThingOp(), h.getThing) },
//	)
//
// huma.Register is generic over the input and output types, so the table
// holds closures rather than (operation, handler) pairs.

// registerAll registers each operation on api, in order.
func registerAll(api huma.API, ops ...func(huma.API)) {
	for _, register := range ops {
		register(api)
	}
}
