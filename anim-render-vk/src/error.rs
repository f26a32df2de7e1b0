//! The error type of the renderer.

use ash::vk;

/// Everything the renderer can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A Vulkan call returned an error code that none of the typed variants below covers
    /// (see [`RenderError::from_vk`] for which codes map where).
    #[error("{call} failed: {result:?}")]
    Vulkan {
        /// The Vulkan function that failed.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
    /// Device memory ran out: a call returned `VK_ERROR_OUT_OF_DEVICE_MEMORY`, the allocator
    /// found no room, or a request is larger than the memory heap that would hold it
    /// (checked before the allocation, which the specification forbids). The renderer stays
    /// usable: free something (a crowd, a target) or ask for less.
    #[error("out of device memory for {what}")]
    OutOfDeviceMemory {
        /// The resource being created, or the Vulkan call that failed.
        what: String,
    },
    /// Host memory ran out (`VK_ERROR_OUT_OF_HOST_MEMORY`).
    #[error("out of host memory in {what}")]
    OutOfHostMemory {
        /// The resource being created, or the Vulkan call that failed.
        what: String,
    },
    /// A request exceeds one of the device's limits (checked before any Vulkan call, since
    /// exceeding them is invalid usage rather than a runtime failure).
    #[error("{what}: {requested} exceeds the device's {limit} of {max}")]
    DeviceLimit {
        /// The resource being created.
        what: String,
        /// The Vulkan name of the limit (`maxBufferSize`, `maxImageDimension2D`, ...).
        limit: &'static str,
        /// What was asked for.
        requested: u64,
        /// The device's limit.
        max: u64,
    },
    /// The logical device was lost (`VK_ERROR_DEVICE_LOST`, from a submit, a fence wait, an
    /// acquire or a present). Nothing more can run on the context: drop the renderer, its
    /// targets and the context (all of which stay droppable) and create a new one.
    #[error("{call}: the Vulkan device was lost")]
    DeviceLost {
        /// The Vulkan call that reported it.
        call: &'static str,
    },
    /// The window surface was lost (`VK_ERROR_SURFACE_LOST_KHR`). The surface belongs to the
    /// context, so the swapchain cannot recreate it: drop the swapchain, renderer and
    /// context, and create a new context for the window.
    #[error("{call}: the window surface was lost")]
    SurfaceLost {
        /// The Vulkan call that reported it.
        call: &'static str,
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
    /// gpu-allocator could not provide memory for a reason other than running out of it
    /// (which is [`RenderError::OutOfDeviceMemory`]).
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
        path: crate::types::SkinPath,
        /// The palette's method.
        method: anim_core::skin::SkinMethod,
    },
    /// More morph targets have a non-zero weight in one draw than the GPU passes apply
    /// ([`crate::MAX_ACTIVE_MORPH_TARGETS`]).
    #[error("{what}: {active} active morph targets, at most {max} a draw")]
    TooManyMorphTargets {
        /// The draw (`instance 3`) or call at fault.
        what: String,
        /// Targets with a non-zero weight.
        active: usize,
        /// The limit, [`crate::MAX_ACTIVE_MORPH_TARGETS`].
        max: usize,
    },
    /// Morph targets asked for on a skinning path that does not apply them (the bone
    /// texture path reads bind vertices as vertex attributes and does not morph).
    #[error("the {path:?} skinning path does not apply morph targets")]
    MorphUnsupported {
        /// The path asked for.
        path: crate::types::SkinPath,
    },
    /// A crowd cannot be created, fed or drawn as asked.
    #[error(transparent)]
    Crowd(#[from] crate::crowd::error::CrowdError),
    /// CPU-side skinning validation failed.
    #[error(transparent)]
    Skinning(#[from] anim_core::skin::SkinningError),
    /// The surface offers no usable format or the window has no usable handle.
    #[error("window surface: {0}")]
    Surface(String),
    /// The UI pass failed for a reason other than a Vulkan result code (which maps as
    /// [`RenderError::from_vk`] says).
    #[cfg(feature = "ui")]
    #[error("UI pass: {0}")]
    Ui(String),
    /// Writing a PNG file failed.
    #[error("writing {path}: {message}")]
    Image {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl RenderError {
    /// The typed error of a failed Vulkan call `call` returning `result`:
    ///
    /// | `result` | error |
    /// |---|---|
    /// | `VK_ERROR_OUT_OF_DEVICE_MEMORY` | [`RenderError::OutOfDeviceMemory`] naming `call` |
    /// | `VK_ERROR_OUT_OF_HOST_MEMORY` | [`RenderError::OutOfHostMemory`] naming `call` |
    /// | `VK_ERROR_DEVICE_LOST` | [`RenderError::DeviceLost`] |
    /// | `VK_ERROR_SURFACE_LOST_KHR` | [`RenderError::SurfaceLost`] |
    /// | any other code | [`RenderError::Vulkan`] with the code |
    ///
    /// (`VK_ERROR_OUT_OF_DATE_KHR` and `VK_SUBOPTIMAL_KHR` never reach the caller of a
    /// swapchain: they recreate it.)
    pub fn from_vk(call: &'static str, result: vk::Result) -> Self {
        match result {
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => Self::OutOfDeviceMemory { what: call.into() },
            vk::Result::ERROR_OUT_OF_HOST_MEMORY => Self::OutOfHostMemory { what: call.into() },
            vk::Result::ERROR_DEVICE_LOST => Self::DeviceLost { call },
            vk::Result::ERROR_SURFACE_LOST_KHR => Self::SurfaceLost { call },
            result => Self::Vulkan { call, result },
        }
    }

    /// The typed error of a failed allocation of `what` by gpu-allocator: running out of
    /// memory is [`RenderError::OutOfDeviceMemory`], anything else
    /// [`RenderError::Allocation`].
    pub(crate) fn from_allocation(what: &str, source: gpu_allocator::AllocationError) -> Self {
        match source {
            gpu_allocator::AllocationError::OutOfMemory => Self::OutOfDeviceMemory { what: what.into() },
            source => Self::Allocation { what: what.into(), source },
        }
    }

    /// True for [`RenderError::DeviceLost`]: the context can run nothing more.
    pub fn is_device_lost(&self) -> bool {
        matches!(self, Self::DeviceLost { .. })
    }
}

/// Attaches the name of the Vulkan call to a raw result.
pub(crate) trait VkCall<T> {
    /// Maps the error into its typed [`RenderError`] naming `call` ([`RenderError::from_vk`]).
    fn vk(self, call: &'static str) -> Result<T, RenderError>;
}

impl<T> VkCall<T> for Result<T, vk::Result> {
    #[inline]
    fn vk(self, call: &'static str) -> Result<T, RenderError> {
        self.map_err(|result| RenderError::from_vk(call, result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every result code of Vulkan 1.3 and of the surface and swapchain extensions maps to
    /// its typed variant, naming the call; the codes without one keep the raw code.
    #[test]
    fn every_documented_code_maps_to_its_variant() {
        let call = "vkQueueSubmit2";
        let typed = |r: vk::Result| RenderError::from_vk(call, r);
        assert!(
            matches!(typed(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY), RenderError::OutOfDeviceMemory { what } if what == call)
        );
        assert!(
            matches!(typed(vk::Result::ERROR_OUT_OF_HOST_MEMORY), RenderError::OutOfHostMemory { what } if what == call)
        );
        assert!(matches!(typed(vk::Result::ERROR_DEVICE_LOST), RenderError::DeviceLost { call: c } if c == call));
        assert!(typed(vk::Result::ERROR_DEVICE_LOST).is_device_lost());
        assert!(matches!(typed(vk::Result::ERROR_SURFACE_LOST_KHR), RenderError::SurfaceLost { call: c } if c == call));
        let untyped = [
            // Vulkan 1.0 success codes a caller may still pass on, then the errors.
            vk::Result::NOT_READY,
            vk::Result::TIMEOUT,
            vk::Result::EVENT_SET,
            vk::Result::EVENT_RESET,
            vk::Result::INCOMPLETE,
            vk::Result::ERROR_INITIALIZATION_FAILED,
            vk::Result::ERROR_MEMORY_MAP_FAILED,
            vk::Result::ERROR_LAYER_NOT_PRESENT,
            vk::Result::ERROR_EXTENSION_NOT_PRESENT,
            vk::Result::ERROR_FEATURE_NOT_PRESENT,
            vk::Result::ERROR_INCOMPATIBLE_DRIVER,
            vk::Result::ERROR_TOO_MANY_OBJECTS,
            vk::Result::ERROR_FORMAT_NOT_SUPPORTED,
            vk::Result::ERROR_FRAGMENTED_POOL,
            vk::Result::ERROR_UNKNOWN,
            // Vulkan 1.1, 1.2, 1.3.
            vk::Result::ERROR_OUT_OF_POOL_MEMORY,
            vk::Result::ERROR_INVALID_EXTERNAL_HANDLE,
            vk::Result::ERROR_FRAGMENTATION,
            vk::Result::ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS,
            vk::Result::PIPELINE_COMPILE_REQUIRED,
            // VK_KHR_surface, VK_KHR_swapchain, VK_KHR_display_swapchain, VK_EXT_debug_report,
            // VK_EXT_full_screen_exclusive.
            vk::Result::ERROR_NATIVE_WINDOW_IN_USE_KHR,
            vk::Result::SUBOPTIMAL_KHR,
            vk::Result::ERROR_OUT_OF_DATE_KHR,
            vk::Result::ERROR_INCOMPATIBLE_DISPLAY_KHR,
            vk::Result::ERROR_VALIDATION_FAILED_EXT,
            vk::Result::ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT,
        ];
        for r in untyped {
            assert!(matches!(typed(r), RenderError::Vulkan { call: c, result } if c == call && result == r), "{r:?}");
        }
        // Through the helper every module uses, with the call in the message.
        let e = Err::<(), _>(vk::Result::ERROR_DEVICE_LOST).vk("vkWaitForFences").unwrap_err();
        assert_eq!(e.to_string(), "vkWaitForFences: the Vulkan device was lost");
        let e = Err::<(), _>(vk::Result::ERROR_SURFACE_LOST_KHR).vk("vkAcquireNextImageKHR").unwrap_err();
        assert_eq!(e.to_string(), "vkAcquireNextImageKHR: the window surface was lost");
    }

    /// The allocator running out is typed; its other failures keep their source.
    #[test]
    fn allocator_out_of_memory_is_typed() {
        let e = RenderError::from_allocation("crowd instances", gpu_allocator::AllocationError::OutOfMemory);
        assert!(matches!(&e, RenderError::OutOfDeviceMemory { what } if what == "crowd instances"), "{e:?}");
        let e = RenderError::from_allocation("x", gpu_allocator::AllocationError::FailedToMap("no".into()));
        assert!(matches!(e, RenderError::Allocation { .. }), "{e:?}");
    }
}
