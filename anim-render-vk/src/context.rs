//! The Vulkan context: instance, optional validation with a counting debug messenger,
//! physical device choice, logical device, one queue, the memory allocator, and (with the
//! `window` feature) the surface of a window that the context owns.
//!
//! Drop order is the reverse of creation: the allocator goes before the device, the device
//! before the surface, messenger and instance, and the window last. Every resource keeps an
//! `Arc<Context>`, so the context outlives all of them.

use crate::error::{RenderError, VkCall};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::ffi::{CStr, c_void};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";
/// Environment variable that turns validation on (`ANIM_VK_VALIDATION=1`).
pub const VALIDATION_ENV: &str = "ANIM_VK_VALIDATION";
/// Messages kept verbatim for reports; later ones are only counted.
const KEPT_MESSAGES: usize = 64;

/// True when [`VALIDATION_ENV`] is set to something other than `0` or empty.
pub fn validation_from_env() -> bool {
    std::env::var(VALIDATION_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A window the context can present to: anything that hands out its display and window
/// handles and can be shared between threads (a `winit::window::Window`, for one).
///
/// The context keeps the window (an `Arc`) until the surface created from it is destroyed,
/// so the handles stay valid for as long as Vulkan uses them.
#[cfg(feature = "window")]
pub trait WindowTarget: raw_window_handle::HasWindowHandle + raw_window_handle::HasDisplayHandle + Send + Sync {}

#[cfg(feature = "window")]
impl<T: raw_window_handle::HasWindowHandle + raw_window_handle::HasDisplayHandle + Send + Sync + ?Sized> WindowTarget
    for T
{
}

/// How to create a [`Context`].
#[derive(Clone, Default)]
pub struct ContextDesc {
    /// Enable `VK_LAYER_KHRONOS_validation` with synchronization validation and count every
    /// warning and error it reports (see [`Context::validation_count`]).
    pub validation: bool,
    /// Create a surface for this window (and the swapchain extension); `None` is headless.
    /// The context owns a reference to the window, so the window outlives its surface.
    #[cfg(feature = "window")]
    pub window: Option<Arc<dyn WindowTarget>>,
}

impl std::fmt::Debug for ContextDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ContextDesc");
        d.field("validation", &self.validation);
        #[cfg(feature = "window")]
        d.field("window", &self.window.is_some());
        d.finish()
    }
}

impl ContextDesc {
    /// A headless context, with or without validation.
    pub fn headless(validation: bool) -> Self {
        #[allow(clippy::needless_update)] // the `window` field exists only with the feature
        Self { validation, ..Self::default() }
    }
}

/// Warnings and errors reported by the validation layer.
#[derive(Debug, Default)]
pub struct ValidationLog {
    count: AtomicUsize,
    messages: Mutex<Vec<String>>,
}

impl ValidationLog {
    /// Number of warnings and errors reported so far.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The first reported messages (up to 64).
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn record(&self, text: String) {
        self.count.fetch_add(1, Ordering::SeqCst);
        let mut m = self.messages.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() < KEPT_MESSAGES {
            m.push(text);
        }
    }
}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes valid callback data for the duration of the call, and `user`
    // is the `ValidationLog` the context keeps alive until the messenger is destroyed.
    let (text, log) = unsafe {
        let message = if data.is_null() || (*data).p_message.is_null() {
            "<no message>".into()
        } else {
            CStr::from_ptr((*data).p_message).to_string_lossy()
        };
        (format!("[{severity:?} {kind:?}] {message}"), &*(user as *const ValidationLog))
    };
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        log::error!("{text}");
    } else {
        log::warn!("{text}");
    }
    log.record(text);
    vk::FALSE
}

/// Instance, device, queue and allocator. Create one with [`Context::new`].
pub struct Context {
    allocator: ManuallyDrop<Mutex<Allocator>>,
    upload_pool: Mutex<vk::CommandPool>,
    queue: Mutex<vk::Queue>,
    queue_family: u32,
    pub(crate) push_descriptor: ash::khr::push_descriptor::Device,
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) swapchain_fn: Option<ash::khr::swapchain::Device>,
    device: ash::Device,
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    physical: vk::PhysicalDevice,
    device_name: String,
    limits: vk::PhysicalDeviceLimits,
    /// `timestampValidBits`, maintenance limits and heap size, queried once at creation.
    facts: DeviceFacts,
    pub(crate) surface: vk::SurfaceKHR,
    pub(crate) surface_fn: Option<ash::khr::surface::Instance>,
    /// Set while a swapchain of the surface exists (a surface takes one swapchain at a time).
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) swapchain_taken: AtomicBool,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    log: Arc<ValidationLog>,
    instance: ash::Instance,
    _entry: ash::Entry,
    /// The window of `surface`, dropped after the surface is destroyed (in `Drop`).
    #[cfg(feature = "window")]
    _window: Option<Arc<dyn WindowTarget>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("device", &self.device_name).field("validation", &self.debug.is_some()).finish()
    }
}

impl Context {
    /// Creates instance, device and allocator (and a surface when `desc.window` is set; the
    /// context then keeps the window alive until the surface is gone).
    ///
    /// # Errors
    /// No Vulkan loader, no device with Vulkan 1.3 (dynamic rendering, synchronization2) and
    /// `VK_KHR_push_descriptor`, validation asked for without the layer, or a failing call.
    pub fn new(desc: &ContextDesc) -> Result<Arc<Self>, RenderError> {
        // SAFETY: loading the system Vulkan loader; its symbols are trusted.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| RenderError::Loader(e.to_string()))?;
        let log = Arc::new(ValidationLog::default());
        let mut layers = Vec::new();
        let mut extensions: Vec<*const std::ffi::c_char> = Vec::new();
        if desc.validation {
            // SAFETY: `entry` holds the loaded loader; enumeration has no preconditions.
            let available =
                unsafe { entry.enumerate_instance_layer_properties() }.vk("vkEnumerateInstanceLayerProperties")?;
            if !available.iter().any(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER)) {
                return Err(RenderError::MissingLayer("VK_LAYER_KHRONOS_validation"));
            }
            layers.push(VALIDATION_LAYER.as_ptr());
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
            // VkValidationFeaturesEXT (synchronization validation) belongs to this extension,
            // which the layer itself provides.
            // SAFETY: as above; the layer name is a valid C string.
            let layer_exts = unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .vk("vkEnumerateInstanceExtensionProperties")?;
            if layer_exts.iter().any(|e| e.extension_name_as_c_str() == Ok(ash::ext::validation_features::NAME)) {
                extensions.push(ash::ext::validation_features::NAME.as_ptr());
            }
        }
        #[cfg(feature = "window")]
        let handles = match &desc.window {
            Some(w) => Some(window_handles(w.as_ref())?),
            None => None,
        };
        #[cfg(not(feature = "window"))]
        let handles: Option<std::convert::Infallible> = None;
        #[cfg(feature = "window")]
        if let Some((display, _)) = handles {
            let required = ash_window::enumerate_required_extensions(display).vk("surface extensions")?;
            extensions.extend_from_slice(required);
        }
        let app = vk::ApplicationInfo::default()
            .application_name(c"anim")
            .engine_name(c"anim-render-vk")
            .api_version(vk::API_VERSION_1_3);
        let severity = vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR;
        let types = vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
            | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
            | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE;
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(severity)
            .message_type(types)
            .pfn_user_callback(Some(debug_callback))
            .user_data(Arc::as_ptr(&log) as *mut c_void);
        let enabled_features = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_features);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        if desc.validation {
            info = info.push_next(&mut messenger_info).push_next(&mut features);
        }
        // SAFETY: the create info and everything it points to live until the call returns.
        let instance = unsafe { entry.create_instance(&info, None) }.vk("vkCreateInstance")?;
        // From here on, partially built state is released by `Partial` on error.
        let mut partial = Partial { entry: &entry, instance: &instance, debug: None, surface: None };
        if desc.validation {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(severity)
                .message_type(types)
                .pfn_user_callback(Some(debug_callback))
                .user_data(Arc::as_ptr(&log) as *mut c_void);
            // SAFETY: the instance enabled VK_EXT_debug_utils; `user_data` points at the
            // `ValidationLog` that the context keeps (Arc) until after the messenger is
            // destroyed in Drop, and the callback only reads it through `&`.
            let m = unsafe { du.create_debug_utils_messenger(&info, None) }.vk("vkCreateDebugUtilsMessengerEXT")?;
            partial.debug = Some((du, m));
        }
        #[cfg(feature = "window")]
        if let Some((display, window)) = handles {
            let sf = ash::khr::surface::Instance::new(&entry, &instance);
            // SAFETY: the handles come from `desc.window`, which the context keeps (`_window`)
            // until `Drop` has destroyed the surface; the instance enabled the extensions
            // `enumerate_required_extensions` named for this display.
            let s = unsafe { ash_window::create_surface(&entry, &instance, display, window, None) }
                .vk("vkCreateSurfaceKHR")?;
            partial.surface = Some((sf, s));
        }
        let (physical, queue_family, device_name, limits) = pick_device(&instance, partial.surface.as_ref())?;
        let facts = device_facts(&instance, physical, queue_family);
        let mut device_exts = vec![ash::khr::push_descriptor::NAME.as_ptr()];
        if handles.is_some() {
            device_exts.push(ash::khr::swapchain::NAME.as_ptr());
        }
        let priorities = [1.0f32];
        let queue_infos =
            [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true).synchronization2(true);
        let device_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_infos)
            .enabled_extension_names(&device_exts)
            .push_next(&mut f13);
        // SAFETY: the physical device supports the extensions and features (checked in
        // `pick_device`).
        let device = unsafe { instance.create_device(physical, &device_info, None) }.vk("vkCreateDevice")?;
        // SAFETY: the device was created with one queue in `queue_family` (index 0 exists).
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(source) => {
                // SAFETY: nothing was created from the device yet.
                unsafe { device.destroy_device(None) };
                return Err(RenderError::from_allocation("allocator", source));
            }
        };
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: a valid device and a queue family it was created with.
        let upload_pool = match unsafe { device.create_command_pool(&pool_info, None) } {
            Ok(p) => p,
            Err(result) => {
                drop(allocator);
                // SAFETY: nothing else was created from the device.
                unsafe { device.destroy_device(None) };
                return Err(RenderError::from_vk("vkCreateCommandPool", result));
            }
        };
        let push_descriptor = ash::khr::push_descriptor::Device::new(&instance, &device);
        let swapchain_fn = handles.map(|_| ash::khr::swapchain::Device::new(&instance, &device));
        let debug = partial.debug.take();
        let (surface_fn, surface) = match partial.surface.take() {
            Some((f, s)) => (Some(f), s),
            None => (None, vk::SurfaceKHR::null()),
        };
        std::mem::forget(partial);
        log::info!("Vulkan device: {device_name}");
        Ok(Arc::new(Self {
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            upload_pool: Mutex::new(upload_pool),
            queue: Mutex::new(queue),
            queue_family,
            push_descriptor,
            swapchain_fn,
            device,
            physical,
            device_name,
            limits,
            facts,
            surface,
            surface_fn,
            swapchain_taken: AtomicBool::new(false),
            debug,
            log,
            instance,
            _entry: entry,
            #[cfg(feature = "window")]
            _window: desc.window.clone(),
        }))
    }

    /// A headless context; validation from [`VALIDATION_ENV`].
    ///
    /// # Errors
    /// As [`Context::new`].
    pub fn headless() -> Result<Arc<Self>, RenderError> {
        Self::new(&ContextDesc::headless(validation_from_env()))
    }

    /// The logical device.
    #[inline]
    pub(crate) fn device(&self) -> &ash::Device {
        &self.device
    }

    /// The instance.
    #[inline]
    #[cfg(feature = "ui")]
    pub(crate) fn instance(&self) -> &ash::Instance {
        &self.instance
    }

    /// Runs `f` with the queue locked (its external synchronization), for a library that
    /// submits on its own (the UI pass's texture uploads).
    #[cfg(feature = "ui")]
    pub(crate) fn with_queue<R>(&self, f: impl FnOnce(vk::Queue) -> R) -> R {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        f(*q)
    }

    /// The physical device.
    #[inline]
    #[cfg_attr(not(any(feature = "window", feature = "ui")), allow(dead_code))]
    pub(crate) fn physical_device(&self) -> vk::PhysicalDevice {
        self.physical
    }

    /// `VkQueueFamilyProperties::timestampValidBits` of the context's queue family: 0 when
    /// the queue writes no timestamps, otherwise 36 to 64.
    #[inline]
    pub(crate) fn timestamp_valid_bits(&self) -> u32 {
        self.facts.timestamp_valid_bits
    }

    /// `VkPhysicalDeviceMaintenance4Properties::maxBufferSize`: the largest buffer the
    /// device creates.
    #[inline]
    pub(crate) fn max_buffer_size(&self) -> u64 {
        self.facts.max_buffer_size
    }

    /// `VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize`: the largest single
    /// memory allocation.
    #[inline]
    pub(crate) fn max_allocation_size(&self) -> u64 {
        self.facts.max_allocation_size
    }

    /// Size in bytes of the largest device-local memory heap (of the largest heap when none
    /// is device local).
    #[inline]
    pub(crate) fn device_local_heap_size(&self) -> u64 {
        self.facts.device_local_heap
    }

    /// Checks memory `requirements` of `what` against the device before allocating: above
    /// `maxMemoryAllocationSize` is [`RenderError::DeviceLimit`], above every heap that one
    /// of the allowed memory types lives in is [`RenderError::OutOfDeviceMemory`] (the
    /// specification forbids asking a heap for more than its size, so the allocation itself
    /// must not be tried).
    ///
    /// # Errors
    /// As described.
    pub(crate) fn check_memory(&self, what: &str, requirements: &vk::MemoryRequirements) -> Result<(), RenderError> {
        self.facts.check_memory(what, requirements)
    }

    /// The device's name (e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`).
    #[inline]
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// The optimal-tiling features of `format` on this device.
    pub(crate) fn format_features(&self, format: vk::Format) -> vk::FormatFeatureFlags {
        // SAFETY: `physical` is the device this context was created from, alive with the
        // instance.
        unsafe { self.instance.get_physical_device_format_properties(self.physical, format) }.optimal_tiling_features
    }

    /// The device's limits.
    #[inline]
    pub fn limits(&self) -> &vk::PhysicalDeviceLimits {
        &self.limits
    }

    /// Family index of the one queue (graphics, compute, transfer and, with a window, present).
    #[inline]
    pub fn queue_family(&self) -> u32 {
        self.queue_family
    }

    /// True when the validation layer is on.
    #[inline]
    pub fn validation_enabled(&self) -> bool {
        self.debug.is_some()
    }

    /// Number of warnings and errors the validation layer reported so far (0 when
    /// validation is off).
    #[inline]
    pub fn validation_count(&self) -> usize {
        self.log.count()
    }

    /// The first reported validation messages (up to 64), for failure reports.
    pub fn validation_messages(&self) -> Vec<String> {
        self.log.messages()
    }

    /// The log itself, which outlives the context: messages the layer reports while the
    /// context is destroyed (objects left alive at `vkDestroyDevice`) are counted there too.
    pub fn validation_log(&self) -> Arc<ValidationLog> {
        self.log.clone()
    }

    /// Runs `f` with the allocator locked.
    pub(crate) fn with_allocator<R>(&self, f: impl FnOnce(&mut Allocator) -> R) -> R {
        let mut a = self.allocator.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut a)
    }

    /// Submits command buffers to the queue (the queue is externally synchronized here).
    ///
    /// # Errors
    /// `vkQueueSubmit2` failed.
    pub(crate) fn submit(&self, submits: &[vk::SubmitInfo2<'_>], fence: vk::Fence) -> Result<(), RenderError> {
        #[cfg(test)]
        if let Some(result) = FAIL_NEXT_SUBMIT.with(std::cell::Cell::take) {
            return Err(RenderError::from_vk("vkQueueSubmit2", result));
        }
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the queue's external synchronization is the lock; callers pass submit infos
        // of recorded (ended) command buffers and live semaphores, and a fence that is
        // unsignalled and not used by another pending submission.
        unsafe { self.device.queue_submit2(*q, submits, fence) }.vk("vkQueueSubmit2")
    }

    /// Presents with the queue lock held.
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) fn present(&self, info: &vk::PresentInfoKHR<'_>) -> Result<bool, vk::Result> {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let sf = self.swapchain_fn.as_ref().expect("present is only reachable from a windowed context's swapchain");
        #[cfg(test)]
        if let Some(result) = FAIL_NEXT_PRESENT.with(std::cell::Cell::take) {
            return Err(result);
        }
        // SAFETY: the queue is locked; the swapchain and semaphores in `info` are alive.
        unsafe { sf.queue_present(*q, info) }
    }

    /// Records commands with `record`, submits them, and waits for them to finish: for
    /// uploads and readbacks outside the frame loop.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub(crate) fn run_once(&self, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), RenderError> {
        let pool = self.upload_pool.lock().unwrap_or_else(|p| p.into_inner());
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(*pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let d = &self.device;
        // SAFETY: the pool is locked for the whole function; the command buffer and fence
        // are freed before it returns, after the fence has signalled.
        unsafe {
            // On success Vulkan returns exactly `command_buffer_count` (1) buffers.
            let cmd = d.allocate_command_buffers(&alloc).vk("vkAllocateCommandBuffers")?[0];
            let fence = match d.create_fence(&vk::FenceCreateInfo::default(), None) {
                Ok(f) => f,
                Err(result) => {
                    d.free_command_buffers(*pool, &[cmd]);
                    return Err(RenderError::from_vk("vkCreateFence", result));
                }
            };
            let result = (|| {
                d.begin_command_buffer(
                    cmd,
                    &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )
                .vk("vkBeginCommandBuffer")?;
                record(cmd);
                d.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
                let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
                self.submit(&[vk::SubmitInfo2::default().command_buffer_infos(&cmds)], fence)?;
                d.wait_for_fences(&[fence], true, u64::MAX).vk("vkWaitForFences")
            })();
            if result.is_err() {
                // A failed submit leaves nothing in flight; a failed wait (device lost)
                // cannot be recovered anyway.
                let _ = d.device_wait_idle();
            }
            d.destroy_fence(fence, None);
            d.free_command_buffers(*pool, &[cmd]);
            result
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: every resource holds an Arc<Context>, so all of them are gone; destroy in
        // reverse creation order: pool, allocator, device, surface, messenger, instance.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(*self.upload_pool.get_mut().unwrap_or_else(|p| p.into_inner()), None);
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            if let Some(sf) = &self.surface_fn {
                sf.destroy_surface(self.surface, None);
            }
            if let Some((du, m)) = &self.debug {
                du.destroy_debug_utils_messenger(*m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Unit tests set this to make the thread's next [`Context::submit`] fail with the code
    /// without submitting (a lost device cannot be provoked on lavapipe).
    pub(crate) static FAIL_NEXT_SUBMIT: std::cell::Cell<Option<vk::Result>> = const { std::cell::Cell::new(None) };
    /// Likewise for the thread's next present (a lost surface cannot be provoked either).
    pub(crate) static FAIL_NEXT_PRESENT: std::cell::Cell<Option<vk::Result>> = const { std::cell::Cell::new(None) };
}

/// Releases what `Context::new` created before an early return.
struct Partial<'a> {
    entry: &'a ash::Entry,
    instance: &'a ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    surface: Option<(ash::khr::surface::Instance, vk::SurfaceKHR)>,
}

impl Drop for Partial<'_> {
    fn drop(&mut self) {
        let _ = self.entry;
        // SAFETY: the objects were created from this instance and nothing else uses them.
        unsafe {
            if let Some((sf, s)) = self.surface.take() {
                sf.destroy_surface(s, None);
            }
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// The raw handles of `w`, which stay valid while `w` is alive.
#[cfg(feature = "window")]
fn window_handles(
    w: &dyn WindowTarget,
) -> Result<(raw_window_handle::RawDisplayHandle, raw_window_handle::RawWindowHandle), RenderError> {
    let display = w.display_handle().map_err(|e| RenderError::Surface(format!("no display handle: {e}")))?;
    let window = w.window_handle().map_err(|e| RenderError::Surface(format!("no window handle: {e}")))?;
    Ok((display.as_raw(), window.as_raw()))
}

/// What the context keeps about its device besides the limits: the queue family's
/// timestamp bits and the device's size limits.
#[derive(Debug, Clone, Copy)]
struct DeviceFacts {
    /// `VkQueueFamilyProperties::timestampValidBits` of the context's queue family.
    timestamp_valid_bits: u32,
    /// `VkPhysicalDeviceMaintenance4Properties::maxBufferSize`.
    max_buffer_size: u64,
    /// `VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize`.
    max_allocation_size: u64,
    /// Size of the largest device-local heap (of any heap when none is device local).
    device_local_heap: u64,
    /// Per memory type, the size of its heap (0 for types the device does not have).
    type_heap_sizes: [u64; vk::MAX_MEMORY_TYPES],
}

impl DeviceFacts {
    /// [`Context::check_memory`] against these facts.
    fn check_memory(&self, what: &str, requirements: &vk::MemoryRequirements) -> Result<(), RenderError> {
        let max = self.max_allocation_size;
        if requirements.size > max {
            return Err(RenderError::DeviceLimit {
                what: what.into(),
                limit: "maxMemoryAllocationSize",
                requested: requirements.size,
                max,
            });
        }
        let largest = (0..vk::MAX_MEMORY_TYPES)
            .filter(|t| requirements.memory_type_bits & (1 << t) != 0)
            .map(|t| self.type_heap_sizes[t])
            .max()
            .unwrap_or(0);
        if requirements.size > largest {
            return Err(RenderError::OutOfDeviceMemory { what: what.into() });
        }
        Ok(())
    }
}

/// Queries [`DeviceFacts`] of `physical` and its queue family `family` (a 1.3 device, so
/// both maintenance property structures are core).
fn device_facts(instance: &ash::Instance, physical: vk::PhysicalDevice, family: u32) -> DeviceFacts {
    let mut m3 = vk::PhysicalDeviceMaintenance3Properties::default();
    let mut m4 = vk::PhysicalDeviceMaintenance4Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut m3).push_next(&mut m4);
    // SAFETY: `physical` was enumerated from this live instance and supports Vulkan 1.3
    // (checked in `pick_device`), so both chained structures are valid; they outlive the call.
    let (families, memory) = unsafe {
        instance.get_physical_device_properties2(physical, &mut p2);
        (
            instance.get_physical_device_queue_family_properties(physical),
            instance.get_physical_device_memory_properties(physical),
        )
    };
    let heaps = memory.memory_heaps_as_slice();
    let local = heaps.iter().filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL)).map(|h| h.size);
    let device_local_heap = local.max().or_else(|| heaps.iter().map(|h| h.size).max()).unwrap_or(0);
    let mut type_heap_sizes = [0; vk::MAX_MEMORY_TYPES];
    for (size, t) in type_heap_sizes.iter_mut().zip(memory.memory_types_as_slice()) {
        *size = heaps.get(t.heap_index as usize).map_or(0, |h| h.size);
    }
    DeviceFacts {
        timestamp_valid_bits: families.get(family as usize).map_or(0, |f| f.timestamp_valid_bits),
        max_buffer_size: m4.max_buffer_size,
        max_allocation_size: m3.max_memory_allocation_size,
        device_local_heap,
        type_heap_sizes,
    }
}

type Picked = (vk::PhysicalDevice, u32, String, vk::PhysicalDeviceLimits);

fn pick_device(
    instance: &ash::Instance,
    surface: Option<&(ash::khr::surface::Instance, vk::SurfaceKHR)>,
) -> Result<Picked, RenderError> {
    // SAFETY: `instance` is a live instance; enumeration has no other preconditions.
    let devices = unsafe { instance.enumerate_physical_devices() }.vk("vkEnumeratePhysicalDevices")?;
    let mut best: Option<(u32, Picked)> = None;
    let mut rejected = Vec::new();
    for pd in devices {
        // SAFETY: `pd` was enumerated from this instance; the queries have no other
        // preconditions.
        let (props, families, exts) = unsafe {
            (
                instance.get_physical_device_properties(pd),
                instance.get_physical_device_queue_family_properties(pd),
                instance.enumerate_device_extension_properties(pd).unwrap_or_default(),
            )
        };
        let name = props.device_name_as_c_str().map_or_else(|_| "?".into(), |n| n.to_string_lossy().into_owned());
        if props.api_version < vk::API_VERSION_1_3 {
            rejected.push(format!("{name}: Vulkan < 1.3"));
            continue;
        }
        let has = |e: &CStr| exts.iter().any(|x| x.extension_name_as_c_str() == Ok(e));
        if !has(ash::khr::push_descriptor::NAME) || (surface.is_some() && !has(ash::khr::swapchain::NAME)) {
            rejected.push(format!("{name}: missing VK_KHR_push_descriptor or VK_KHR_swapchain"));
            continue;
        }
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f13);
        // SAFETY: valid physical device and feature chain.
        unsafe { instance.get_physical_device_features2(pd, &mut f2) };
        if f13.dynamic_rendering == vk::FALSE || f13.synchronization2 == vk::FALSE {
            rejected.push(format!("{name}: no dynamic rendering or synchronization2"));
            continue;
        }
        let family = families.iter().enumerate().position(|(i, f)| {
            let gc = f.queue_flags.contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE);
            let present = surface.is_none_or(|(sf, s)| {
                // SAFETY: valid device, family index and surface.
                unsafe { sf.get_physical_device_surface_support(pd, i as u32, *s) }.unwrap_or(false)
            });
            gc && present
        });
        let Some(family) = family else {
            rejected.push(format!("{name}: no graphics+compute queue that can present"));
            continue;
        };
        let score = match props.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => 4,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 3,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            _ => 1,
        };
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, (pd, family as u32, name, props.limits)));
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| RenderError::NoDevice(rejected.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memory pre-check on a device like a discrete GPU, whose single allocations may be
    /// larger than its heaps: above the heap of every allowed type is out of device memory,
    /// above `maxMemoryAllocationSize` a device limit, and a fitting request passes. (On
    /// lavapipe the heap equals `maxMemoryAllocationSize`, so only the limit is reachable.)
    #[test]
    fn memory_requests_are_checked_against_heaps_and_limits() {
        let gib = 1u64 << 30;
        let mut type_heap_sizes = [0; vk::MAX_MEMORY_TYPES];
        type_heap_sizes[0] = 80 * gib; // device local
        type_heap_sizes[1] = 64 * gib; // host visible
        let facts = DeviceFacts {
            timestamp_valid_bits: 64,
            max_buffer_size: 1 << 40,
            max_allocation_size: 1 << 40,
            device_local_heap: 80 * gib,
            type_heap_sizes,
        };
        let req = |size, bits| vk::MemoryRequirements { size, alignment: 256, memory_type_bits: bits };
        assert!(facts.check_memory("fits", &req(80 * gib, 0b11)).is_ok());
        let e = facts.check_memory("huge", &req(81 * gib, 0b11)).unwrap_err();
        assert!(matches!(&e, RenderError::OutOfDeviceMemory { what } if what == "huge"), "{e:?}");
        // Only the host-visible type allowed: its smaller heap counts.
        let e = facts.check_memory("staging", &req(70 * gib, 0b10)).unwrap_err();
        assert!(matches!(&e, RenderError::OutOfDeviceMemory { what } if what == "staging"), "{e:?}");
        let e = facts.check_memory("tib", &req(2 << 40, 0b11)).unwrap_err();
        assert!(
            matches!(&e, RenderError::DeviceLimit { limit: "maxMemoryAllocationSize", requested, max, .. }
                if *requested == 2 << 40 && *max == 1 << 40),
            "{e:?}"
        );
        // No allowed type at all: nothing fits.
        assert!(matches!(facts.check_memory("none", &req(16, 0)), Err(RenderError::OutOfDeviceMemory { .. })));
    }

    /// An object of the instance left alive at `vkDestroyInstance` is reported, after the
    /// context's own messenger is gone, through the messenger chained into
    /// `VkInstanceCreateInfo`: teardown checks cover the instance's destruction too.
    #[test]
    fn a_leaked_instance_object_is_reported_at_instance_destruction() {
        let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
        let log = ctx.validation_log();
        let (du, _) = ctx.debug.as_ref().expect("validation is on");
        // Reports nothing itself (errors of an unused type only); it is only leaked.
        let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
            .message_type(vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE)
            .pfn_user_callback(Some(debug_callback))
            .user_data(Arc::as_ptr(&log) as *mut c_void);
        // SAFETY: the instance enabled VK_EXT_debug_utils; `user_data` is the log, which this
        // test keeps alive past the instance. The messenger is leaked on purpose.
        let _leaked = unsafe { du.create_debug_utils_messenger(&info, None) }.unwrap();
        drop(ctx);
        let messages = log.messages().join("\n");
        assert!(log.count() > 0, "the leak at vkDestroyInstance went unreported");
        assert!(messages.contains("vkDestroyInstance"), "{messages}");
        assert!(messages.contains("VkDebugUtilsMessengerEXT"), "{messages}");
    }
}
