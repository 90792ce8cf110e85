//go:build vkflow_nobarriers

package sequence

// inferBarriers is false only under the test-only vkflow_nobarriers build
// tag: the sequence then records none of the barriers it infers, and the
// synchronization validation layer must report the hazards (make
// test-oracle). Never ship a build with this tag.
const inferBarriers = false
