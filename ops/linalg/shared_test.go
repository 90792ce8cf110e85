package linalg_test

import "github.com/vkflow/vkflow/ops/internal/opstest"

// Helpers shared with the other op packages' tests (internal/opstest).
var (
	cxRound  = opstest.CxRound
	cxUpload = opstest.CxUpload
	readBack = opstest.ReadBack
	cxEps    = opstest.CxEps
	numelOf  = opstest.NumelOf
	roundTo  = opstest.RoundTo
)

var (
	linTensor = opstest.LinTensor
	linRead   = opstest.LinRead
	linRandom = opstest.LinRandom
)
