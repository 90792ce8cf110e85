//go:build vkflow_nobarriers

package core

// InferBarriers is false only under the test-only vkflow_nobarriers build
// tag: vkflow then records none of the barriers it infers, and the
// synchronization validation layer must report the hazards (make
// test-oracle). Never ship a build with this tag.
const InferBarriers = false
