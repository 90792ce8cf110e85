package ops

// The soft rasterizer's ops (soft_raster, over and their VJPs' kernels)
// register when package ops is linked, as linalg's and fft's do.
import _ "github.com/vkflow/vkflow/ops/render"
