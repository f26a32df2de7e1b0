//! The error type of the renderer.

use ash::vk;

/// Everything the renderer can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A Vulkan call returned an error code.
    #[error("{call} failed: {result:?}")]
    Vulkan {
        /// The Vulkan function that failed.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
    /// The Vulkan loader library could not be loaded.
    #[error("cannot load the Vulkan library: {0}")]
    Loader(String),
    /// No physical device offers what the renderer needs.
    #[error("no suitable Vulkan device: {0}")]
    NoDevice(String),
    /// Validation was asked for but `VK_LAYER_KHRONOS_validation` is not installed.
    #[error("validation requested but the layer {0} is not installed")]
    MissingLayer(&'static str),
    /// gpu-allocator could not provide memory.
    #[error("memory allocation for {what} failed: {source}")]
    Allocation {
        /// The resource being allocated.
        what: String,
        /// The allocator's error.
        source: gpu_allocator::AllocationError,
    },
    /// Inputs that do not fit together (lengths, palette sizes, handles), named.
    #[error("invalid input: {0}")]
    Input(String),
    /// A skinning path that cannot run this method (the bone texture holds matrices only).
    #[error("the {path:?} skinning path does not support {method:?} skinning")]
    Unsupported {
        /// The path asked for.
        path: crate::frame::SkinPath,
        /// The palette's method.
        method: anim_core::SkinMethod,
    },
    /// A crowd cannot be created, fed or drawn as asked.
    #[error(transparent)]
    Crowd(#[from] crate::crowd::CrowdError),
    /// CPU-side skinning validation failed.
    #[error(transparent)]
    Skinning(#[from] anim_core::SkinningError),
    /// The surface offers no usable format or the window has no usable handle.
    #[error("window surface: {0}")]
    Surface(String),
    /// Writing a PNG file failed.
    #[error("writing {path}: {message}")]
    Image {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// Attaches the name of the Vulkan call to a raw result.
pub(crate) trait VkCall<T> {
    /// Maps the error into [`RenderError::Vulkan`] naming `call`.
    fn vk(self, call: &'static str) -> Result<T, RenderError>;
}

impl<T> VkCall<T> for Result<T, vk::Result> {
    #[inline]
    fn vk(self, call: &'static str) -> Result<T, RenderError> {
        self.map_err(|result| RenderError::Vulkan { call, result })
    }
}
