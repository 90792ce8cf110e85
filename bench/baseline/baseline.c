/*
 * baseline.c - raw C Vulkan baseline for the vkflow Go benchmarks.
 *
 * Build:
 *   cc -O2 -std=c11 -Wall -Wextra -o OUT bench/baseline/baseline.c -lvulkan -lm
 *
 * Usage:
 *   baseline SHADER_DIR [-benchtime SECONDS] [-run SUBSTRING] [-sum8 PATH]
 *
 * SHADER_DIR must contain mul.spv, mul_vec4.spv, saxpy.spv and add_vec4.spv;
 * the diamond8 workloads also load sum8.spv from PATH (default
 * bench/testdata/sum8.spv, relative to the working directory). Results go to
 * stdout in Go's benchmark format
 * (BenchmarkC/<name>-<ncpu>\t<iters>\t<ns> ns/op[\t<x> GB/s][\t<x> ns/dispatch]);
 * diagnostics (device, driver, notes) go to stderr. See README.md.
 */
#define _POSIX_C_SOURCE 200809L

#include <vulkan/vulkan.h>

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* ------------------------------------------------------------------------ */
/* Error handling                                                           */
/* ------------------------------------------------------------------------ */

#define VK_CHECK(expr)                                                        \
    do {                                                                      \
        VkResult vk_check_r_ = (expr);                                        \
        if (vk_check_r_ != VK_SUCCESS) {                                      \
            fprintf(stderr, "baseline: %s failed: VkResult %d (line %d)\n",   \
                    #expr, (int)vk_check_r_, __LINE__);                       \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static void die(const char *msg)
{
    fprintf(stderr, "baseline: %s\n", msg);
    exit(1);
}

static void *xaligned_alloc(size_t size)
{
    /* size is always a multiple of 64 here, as aligned_alloc requires. */
    void *p = aligned_alloc(64, size);
    if (!p)
        die("out of host memory");
    return p;
}

/* ------------------------------------------------------------------------ */
/* Constants                                                                */
/* ------------------------------------------------------------------------ */

#define SMALL_N 1024u                      /* dispatch1024 element count */
#define BIG_N (16u * 1024u * 1024u)        /* mul16m element count */
#define MUL_LOCAL_SIZE 64u                 /* mul.spv local_size_x */
#define MUL_VEC4_LOCAL_SIZE 256u           /* mul_vec4.spv local_size_x */
#define BYTES_PER_ELEMENT 12.0             /* a + b read, out written */
#define CHAIN_N 1024u                      /* chain1000 element count */
#define CHAIN_LEN 1000u                    /* chain1000 dispatches per chain */
#define SAXPY_LOCAL_SIZE 64u               /* saxpy.spv local_size_x */
#define WIDE_N (256u * 1024u)              /* wide8_cmdbuf floats per buffer */
#define WIDE_WIDTH 8u                      /* wide8_cmdbuf independent dispatches */
#define POLL_NS 200000u                    /* dispatch_poll1024's poll before it blocks */
#define DIAMOND_N (256u * 1024u)           /* diamond8 floats per buffer */
#define DIAMOND_WIDTH 8u                   /* diamond8 branches (sum8.spv joins 8) */
#define ADD_VEC4_LOCAL_SIZE 256u           /* add_vec4.spv local_size_x, in vec4s */
#define SUM8_LOCAL_SIZE 64u                /* sum8.spv local_size_x */
#define MAX_BINDINGS (DIAMOND_WIDTH + 1u)  /* sum8.spv's: b[0..7], out */
#define DEFAULT_SUM8 "bench/testdata/sum8.spv"

/* What a workload needs set up (Workload.needs). */
#define NEED_SMALL 1u /* dispatch1024's buffers and command buffer */
#define NEED_BIG 2u   /* the mul16m_* buffers and command buffers */
#define NEED_CHAIN 4u /* saxpy, the chains' x and y and command buffers */
#define NEED_WIDE 8u  /* wide8_cmdbuf's buffers and command buffer (with NEED_CHAIN) */
#define NEED_DIAMOND 16u /* the diamond8 workloads' pipelines, buffers, command buffers */

/* ------------------------------------------------------------------------ */
/* Device setup shared by the main context and manager_create               */
/* ------------------------------------------------------------------------ */

static uint32_t g_device_index = 0;

static VkInstance create_instance(void)
{
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "vkflow-baseline",
        .applicationVersion = 1,
        .pEngineName = "vkflow-baseline",
        .engineVersion = 1,
        .apiVersion = VK_API_VERSION_1_2,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    VkInstance instance;
    VK_CHECK(vkCreateInstance(&ci, NULL, &instance));
    return instance;
}

static VkPhysicalDevice pick_physical_device(VkInstance instance)
{
    VkPhysicalDevice devs[16];
    uint32_t count = 16;
    VkResult r = vkEnumeratePhysicalDevices(instance, &count, devs);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        VK_CHECK(r);
    if (count == 0)
        die("no Vulkan physical devices");
    if (g_device_index >= count) {
        fprintf(stderr, "baseline: BASELINE_DEVICE=%u but only %u device(s)\n",
                g_device_index, count);
        exit(1);
    }
    return devs[g_device_index];
}

static uint32_t find_compute_family(VkPhysicalDevice phys)
{
    VkQueueFamilyProperties props[32];
    uint32_t count = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &count, props);
    for (uint32_t i = 0; i < count; i++)
        if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return i;
    die("no queue family with VK_QUEUE_COMPUTE_BIT");
    return 0;
}

static VkDevice create_device(VkPhysicalDevice phys, uint32_t family, uint32_t queues)
{
    float priority[2] = {1.0f, 1.0f};
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = family,
        .queueCount = queues,
        .pQueuePriorities = priority,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .timelineSemaphore = VK_TRUE,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f12,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
    };
    VkDevice device;
    VK_CHECK(vkCreateDevice(phys, &dci, NULL, &device));
    return device;
}

static VkSemaphore create_timeline(VkDevice device)
{
    VkSemaphoreTypeCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
        .initialValue = 0,
    };
    VkSemaphoreCreateInfo sci = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
        .pNext = &tci,
    };
    VkSemaphore sem;
    VK_CHECK(vkCreateSemaphore(device, &sci, NULL, &sem));
    return sem;
}

/* ------------------------------------------------------------------------ */
/* Main context                                                             */
/* ------------------------------------------------------------------------ */

typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size; /* exact requested byte size (descriptor range) */
    void *map;
} Buffer;

typedef struct {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    /* queue2: the family's second VkQueue where it has one (vkflow's second
     * logical queue maps there), else queue. */
    VkQueue queue2;
    uint32_t queues;
    uint32_t family;
    VkSemaphore timeline;
    uint64_t timeline_value;
    VkPhysicalDeviceMemoryProperties mem_props;
    uint32_t max_group_count_x;

    VkCommandPool cmd_pool;
    VkDescriptorPool desc_pool;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    VkPipeline pipe_mul;      /* mul.spv */
    VkPipeline pipe_mul_vec4; /* mul_vec4.spv */

    /* dispatch1024 */
    Buffer sa, sb, so;
    VkDescriptorSet set_small;
    VkCommandBuffer cb_small;
    int small_verified;

    /* mul16m_* */
    int have_big;
    Buffer ba, bb, bo;
    VkDescriptorSet set_big;
    VkCommandBuffer cb_vec4;
    VkCommandBuffer cb_scalar;
    float *src_a, *src_b, *result;
    int e2e_verified;
    int scalar_verified;

    /* chain1000: saxpy y += alpha*x, two command buffers (one per logical
     * queue; both are submitted to the one VkQueue), linked by their own
     * timeline semaphore. */
    int have_chain;
    VkDescriptorSetLayout chain_set_layout;
    VkPipelineLayout chain_pipe_layout;
    VkPipeline pipe_saxpy;
    Buffer cx, cy;
    VkDescriptorSet set_chain;
    VkCommandBuffer cb_chain[2];
    VkCommandBuffer cb_host_sync; /* verification only: writes -> host */
    VkSemaphore chain_timeline;
    uint64_t chain_value;         /* last value signalled on chain_timeline */
    int chain_verified, chain_1q_verified;

    /* chain1000_cmdbuf: the same chain recorded into one command buffer. */
    VkCommandBuffer cb_chain_one;
    int chain_one_verified;

    /* wide8_cmdbuf: WIDE_WIDTH independent saxpy dispatches, one per y. */
    int have_wide;
    Buffer wx, wy[WIDE_WIDTH];
    VkDescriptorSet set_wide[WIDE_WIDTH];
    VkCommandBuffer cb_wide;
    int wide_verified;

    /* wide8_2q: the same dispatches in two command buffers of WIDE_WIDTH/2,
     * one per VkQueue, each signalling a timeline of its own; one host wait
     * for both. */
    VkCommandBuffer cb_wide_half[2];
    VkSemaphore wide_tl[2];
    uint64_t wide_value[2];
    int wide2_verified;

    /* diamond8: s = x + x (add_vec4.spv), b[i] = s + c[i] for i < 8 (add_vec4),
     * out = b[0] + ... + b[7] (sum8.spv), DIAMOND_N floats each. */
    int have_diamond;
    VkDescriptorSetLayout add_set_layout, sum8_set_layout;
    VkPipelineLayout add_pipe_layout, sum8_pipe_layout;
    VkPipeline pipe_add_vec4, pipe_sum8;
    Buffer dx, ds, dout, dc[DIAMOND_WIDTH], db[DIAMOND_WIDTH];
    VkDescriptorSet set_dsrc, set_dbranch[DIAMOND_WIDTH], set_djoin;
    /* diamond8_cmdbuf: the whole diamond in one command buffer. */
    VkCommandBuffer cb_diamond;
    int diamond_verified;
    /* diamond8_2q: four command buffers, the segments of vkflow's 2-queue
     * schedule: [0] s and [1] the even branches on queue, [2] the odd
     * branches and [3] the join on queue2; diamond_tl[0] is signalled by
     * [0] and [1], diamond_tl[1] by [2] and [3]; diamond_seg[k] is the
     * value segment k signalled in the last run (0 before the first). */
    VkCommandBuffer cb_diamond_seg[4];
    VkSemaphore diamond_tl[2];
    uint64_t diamond_value[2];
    uint64_t diamond_seg[4];
    int diamond2_verified;
} Ctx;

static uint32_t pick_memory_type(const Ctx *c, uint32_t type_bits)
{
    const VkMemoryPropertyFlags hv =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags wanted[2] = {
        hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
        hv,
    };
    for (int w = 0; w < 2; w++)
        for (uint32_t i = 0; i < c->mem_props.memoryTypeCount; i++)
            if ((type_bits & (1u << i)) &&
                (c->mem_props.memoryTypes[i].propertyFlags & wanted[w]) == wanted[w])
                return i;
    die("no HOST_VISIBLE|HOST_COHERENT memory type");
    return 0;
}

static Buffer create_buffer(Ctx *c, VkDeviceSize size)
{
    Buffer b = {.size = size};
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VK_CHECK(vkCreateBuffer(c->device, &bci, NULL, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(c->device, b.buffer, &req);
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = pick_memory_type(c, req.memoryTypeBits),
    };
    VK_CHECK(vkAllocateMemory(c->device, &mai, NULL, &b.memory));
    VK_CHECK(vkBindBufferMemory(c->device, b.buffer, b.memory, 0));
    VK_CHECK(vkMapMemory(c->device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.map));
    return b;
}

static void destroy_buffer(Ctx *c, Buffer *b)
{
    if (b->buffer == VK_NULL_HANDLE)
        return;
    vkUnmapMemory(c->device, b->memory);
    vkDestroyBuffer(c->device, b->buffer, NULL);
    vkFreeMemory(c->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

static VkShaderModule load_shader_path(Ctx *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "baseline: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (fseek(f, 0, SEEK_END) != 0)
        die("fseek failed");
    long len = ftell(f);
    if (len <= 0 || len % 4 != 0) {
        fprintf(stderr, "baseline: %s: bad SPIR-V size %ld\n", path, len);
        exit(1);
    }
    rewind(f);
    uint32_t *code = malloc((size_t)len);
    if (!code)
        die("out of host memory");
    if (fread(code, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "baseline: short read on %s\n", path);
        exit(1);
    }
    fclose(f);
    VkShaderModuleCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = (size_t)len,
        .pCode = code,
    };
    VkShaderModule mod;
    VK_CHECK(vkCreateShaderModule(c->device, &ci, NULL, &mod));
    free(code);
    return mod;
}

static VkShaderModule load_shader(Ctx *c, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return load_shader_path(c, path);
}

static VkPipeline create_pipeline_layout(Ctx *c, VkShaderModule mod, int dispatch_base,
                                         VkPipelineLayout layout)
{
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = dispatch_base ? VK_PIPELINE_CREATE_DISPATCH_BASE_BIT : 0,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = mod,
            .pName = "main",
        },
        .layout = layout,
    };
    VkPipeline p;
    VK_CHECK(vkCreateComputePipelines(c->device, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    return p;
}

static VkPipeline create_pipeline(Ctx *c, VkShaderModule mod, int dispatch_base)
{
    return create_pipeline_layout(c, mod, dispatch_base, c->pipe_layout);
}

/* A descriptor set of layout binding bufs[i] (whole) at binding i, i < n <= MAX_BINDINGS. */
static VkDescriptorSet create_set_of(Ctx *c, VkDescriptorSetLayout layout, uint32_t n,
                                     const Buffer *const *bufs)
{
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = c->desc_pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &layout,
    };
    VkDescriptorSet set;
    VK_CHECK(vkAllocateDescriptorSets(c->device, &ai, &set));
    VkDescriptorBufferInfo infos[MAX_BINDINGS];
    if (n > MAX_BINDINGS)
        die("create_set_of: too many bindings");
    for (uint32_t i = 0; i < n; i++)
        infos[i] = (VkDescriptorBufferInfo){bufs[i]->buffer, 0, bufs[i]->size};
    VkWriteDescriptorSet w = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = set,
        .dstBinding = 0,
        .descriptorCount = n,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = infos,
    };
    vkUpdateDescriptorSets(c->device, 1, &w, 0, NULL);
    return set;
}

/* A set of the mul layout: a, b, out. */
static VkDescriptorSet create_set(Ctx *c, const Buffer *a, const Buffer *b, const Buffer *o)
{
    const Buffer *bufs[3] = {a, b, o};
    return create_set_of(c, c->set_layout, 3, bufs);
}

static VkCommandBuffer alloc_cb_flags(Ctx *c, VkCommandBufferUsageFlags flags)
{
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = c->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkCommandBuffer cb;
    VK_CHECK(vkAllocateCommandBuffers(c->device, &ai, &cb));
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = flags, /* reusable: no ONE_TIME_SUBMIT */
    };
    VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    return cb;
}

static VkCommandBuffer alloc_cb(Ctx *c)
{
    return alloc_cb_flags(c, 0);
}

/*
 * 1-D dispatch of `groups` workgroups. When groups exceeds
 * maxComputeWorkGroupCount[0] (65535 on lavapipe; mul.spv over 16M floats
 * needs 262144) the dispatch is split into equal chunks issued with
 * vkCmdDispatchBase (the pipeline is created with DISPATCH_BASE), so
 * gl_GlobalInvocationID.x still covers [0, groups*local). The chunks write
 * disjoint ranges of the output, so no barrier is needed between them.
 */
static void record_dispatch_1d(Ctx *c, VkCommandBuffer cb, uint32_t groups)
{
    uint32_t max = c->max_group_count_x;
    if (groups <= max) {
        vkCmdDispatch(cb, groups, 1, 1);
        return;
    }
    uint32_t chunks = (groups + max - 1) / max;
    uint32_t per = (groups + chunks - 1) / chunks;
    for (uint32_t base = 0; base < groups; base += per) {
        uint32_t n = groups - base < per ? groups - base : per;
        vkCmdDispatchBase(cb, base, 0, 0, n, 1, 1);
    }
}

static void record_mul(Ctx *c, VkCommandBuffer cb, VkPipeline pipe, VkDescriptorSet set,
                       uint32_t groups, int host_barrier)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_layout, 0, 1,
                            &set, 0, NULL);
    record_dispatch_1d(c, cb, groups);
    if (host_barrier) {
        VkMemoryBarrier mb = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
        };
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    }
    VK_CHECK(vkEndCommandBuffer(cb));
}

/* Submit cb (or nothing when cb is NULL) to q, signalling signal on the
 * timeline signal_sem; when wait_sem is not VK_NULL_HANDLE, first waiting at
 * stage for wait on it. */
static void submit_timeline(VkQueue q, VkCommandBuffer cb, VkSemaphore wait_sem, uint64_t wait,
                            VkPipelineStageFlags stage, VkSemaphore signal_sem, uint64_t signal)
{
    uint32_t waits = wait_sem != VK_NULL_HANDLE;
    VkTimelineSemaphoreSubmitInfo tsi = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = waits,
        .pWaitSemaphoreValues = waits ? &wait : NULL,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &signal,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &tsi,
        .waitSemaphoreCount = waits,
        .pWaitSemaphores = waits ? &wait_sem : NULL,
        .pWaitDstStageMask = waits ? &stage : NULL,
        .commandBufferCount = cb ? 1u : 0u,
        .pCommandBuffers = cb ? &cb : NULL,
        .signalSemaphoreCount = 1,
        .pSignalSemaphores = &signal_sem,
    };
    VK_CHECK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE));
}

/* Submit cb (or nothing when cb is NULL) to q, signalling ++timeline;
 * returns the value it signals. */
static uint64_t submit_signal_q(Ctx *c, VkQueue q, VkCommandBuffer cb)
{
    uint64_t value = ++c->timeline_value;
    submit_timeline(q, cb, VK_NULL_HANDLE, 0, 0, c->timeline, value);
    return value;
}

/* submit_signal_q on the first queue. */
static uint64_t submit_signal(Ctx *c, VkCommandBuffer cb)
{
    return submit_signal_q(c, c->queue, cb);
}

/* Submit cb (or nothing when cb is NULL), signalling ++timeline; host-wait it. */
static void submit_wait(Ctx *c, VkCommandBuffer cb)
{
    uint64_t value = submit_signal(c, cb);
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &c->timeline,
        .pValues = &value,
    };
    VK_CHECK(vkWaitSemaphores(c->device, &wi, UINT64_MAX));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The polling host wait for n timelines: until every sems[i] reaches
 * values[i], poll their counters for up to POLL_NS, yielding between polls,
 * then block in vkWaitSemaphores (all of them). */
static void poll_wait(Ctx *c, uint32_t n, const VkSemaphore *sems, const uint64_t *values)
{
    uint64_t start = now_ns();
    for (;;) {
        uint32_t reached = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = 0;
            VK_CHECK(vkGetSemaphoreCounterValue(c->device, sems[i], &v));
            if (v >= values[i])
                reached++;
        }
        if (reached == n)
            return;
        if (now_ns() - start >= POLL_NS)
            break;
        sched_yield();
    }
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = n,
        .pSemaphores = sems,
        .pValues = values,
    };
    VK_CHECK(vkWaitSemaphores(c->device, &wi, UINT64_MAX));
}

/* submit_wait, but the host wait first polls the timeline's counter for up
 * to POLL_NS, yielding the CPU between polls, and blocks in vkWaitSemaphores
 * only after that: the wait vkflow's host waits make (WithWaitSpin, default
 * 200 µs), in raw C, so that vkflow's polled wait has a baseline that waits
 * the same way. */
static void submit_poll_wait(Ctx *c, VkCommandBuffer cb)
{
    uint64_t value = submit_signal(c, cb);
    poll_wait(c, 1, &c->timeline, &value);
}

/* Deterministic inputs whose products are normal floats (no denormals, no
 * overflow), so CPU and GPU must agree bit-for-bit. */
static void fill_inputs(float *a, float *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = i * 2654435761u;
        a[i] = (float)((h >> 8) & 0xFFFF) * (1.0f / 1024.0f) - 32.0f + 0.3f;
        b[i] = (float)((h >> 16) & 0x3FF) * 0.01f + 0.5f;
    }
}

static void verify(const char *what, const float *a, const float *b, const float *out,
                   uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        float want = a[i] * b[i];
        if (out[i] != want) {
            fprintf(stderr, "baseline: %s: verification failed at %u: got %.9g want %.9g\n",
                    what, i, (double)out[i], (double)want);
            exit(1);
        }
    }
    fprintf(stderr, "baseline: %s: verified %u elements\n", what, n);
}

/* A set of the saxpy layout: binding 0 = x, binding 1 = y. */
static VkDescriptorSet create_saxpy_set(Ctx *c, const Buffer *x, const Buffer *y)
{
    const Buffer *bufs[2] = {x, y};
    return create_set_of(c, c->chain_set_layout, 2, bufs);
}

/* Bind saxpy with set and push alpha = 1. */
static void bind_saxpy(Ctx *c, VkCommandBuffer cb, VkDescriptorSet set)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_saxpy);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->chain_pipe_layout, 0, 1,
                            &set, 0, NULL);
    const float alpha = 1.0f;
    vkCmdPushConstants(cb, c->chain_pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       sizeof alpha, &alpha);
}

/*
 * chain1000 command buffer: like a vkflow sequence holding one Dispatch, it
 * starts with a global barrier (everything earlier on the queue happens
 * before, and its writes are visible to, this command buffer), then binds
 * saxpy and dispatches it over CHAIN_N floats with alpha = 1. The two
 * command buffers of the chain are each submitted again while their
 * previous submit may still be pending, hence SIMULTANEOUS_USE (vkflow
 * records its sequences with it too).
 */
static VkCommandBuffer record_chain_cb(Ctx *c)
{
    VkCommandBuffer cb = alloc_cb_flags(c, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
    };
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    bind_saxpy(c, cb, c->set_chain);
    vkCmdDispatch(cb, CHAIN_N / SAXPY_LOCAL_SIZE, 1, 1);
    VK_CHECK(vkEndCommandBuffer(cb));
    return cb;
}

/*
 * The narrow barrier that orders a saxpy dispatch after earlier ones on the
 * same y: COMPUTE_SHADER / SHADER_WRITE -> COMPUTE_SHADER / SHADER_READ |
 * SHADER_WRITE on the whole of y.
 */
static VkBufferMemoryBarrier y_barrier(const Buffer *y)
{
    return (VkBufferMemoryBarrier){
        .sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
        .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
        .buffer = y->buffer,
        .offset = 0,
        .size = VK_WHOLE_SIZE,
    };
}

static void record_y_barriers(VkCommandBuffer cb, uint32_t n, const VkBufferMemoryBarrier *bb)
{
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, n, bb, 0, NULL);
}

/*
 * chain1000_cmdbuf command buffer: the chain's CHAIN_LEN dispatches recorded
 * once into one command buffer, saxpy bound once, with y_barrier between
 * consecutive dispatches, and once more before the first one.
 *
 * That first barrier orders the iteration after the previous one, whose
 * last dispatch wrote y. The host waited for that submit's timeline value
 * before submitting again, so on any real driver it has completed; but a
 * host wait is no memory dependency between the two submits (the signal
 * makes the writes available, nothing makes them visible to the next
 * submit's shader), and the validation layer's cross-submit check does not
 * count it either (README.md). vkflow's own submits get the same barrier
 * from their prelude, so both sides pay for it: one barrier per chain.
 *
 * The command buffer is never pending when it is submitted again (the host
 * waits), so it needs no SIMULTANEOUS_USE.
 */
static VkCommandBuffer record_chain_one_cb(Ctx *c)
{
    VkCommandBuffer cb = alloc_cb(c);
    bind_saxpy(c, cb, c->set_chain);
    const VkBufferMemoryBarrier bb = y_barrier(&c->cy);
    for (uint32_t k = 0; k < CHAIN_LEN; k++) {
        record_y_barriers(cb, 1, &bb);
        vkCmdDispatch(cb, CHAIN_N / SAXPY_LOCAL_SIZE, 1, 1);
    }
    VK_CHECK(vkEndCommandBuffer(cb));
    return cb;
}

static void chain_init(Ctx *c, const char *shader_dir)
{
    c->have_chain = 1;
    VkDescriptorSetLayoutBinding binds[2];
    for (uint32_t i = 0; i < 2; i++) {
        binds[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    VkDescriptorSetLayoutCreateInfo dslci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 2,
        .pBindings = binds,
    };
    VK_CHECK(vkCreateDescriptorSetLayout(c->device, &dslci, NULL, &c->chain_set_layout));
    VkPushConstantRange pcr = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .offset = 0,
        .size = sizeof(float),
    };
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &c->chain_set_layout,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &pcr,
    };
    VK_CHECK(vkCreatePipelineLayout(c->device, &plci, NULL, &c->chain_pipe_layout));
    VkShaderModule mod = load_shader(c, shader_dir, "saxpy.spv");
    c->pipe_saxpy = create_pipeline_layout(c, mod, 0, c->chain_pipe_layout);
    vkDestroyShaderModule(c->device, mod, NULL);

    c->cx = create_buffer(c, CHAIN_N * sizeof(float));
    c->cy = create_buffer(c, CHAIN_N * sizeof(float));
    float *x = c->cx.map;
    for (uint32_t i = 0; i < CHAIN_N; i++)
        x[i] = 1.0f;
    memset(c->cy.map, 0, CHAIN_N * sizeof(float));

    c->set_chain = create_saxpy_set(c, &c->cx, &c->cy);

    c->cb_chain[0] = record_chain_cb(c);
    c->cb_chain[1] = record_chain_cb(c);
    c->cb_chain_one = record_chain_one_cb(c);

    c->chain_timeline = create_timeline(c->device);
    c->chain_value = 0;
}

/*
 * wide8_cmdbuf: x (WIDE_N ones) and WIDE_WIDTH buffers y[i], one command
 * buffer binding saxpy once and dispatching it over each y[i] in turn
 * (WIDE_N / 64 workgroups each) with no barrier between them: the
 * dispatches share only x, which none writes. One barrier at the start,
 * with y_barrier for every y[i], orders them after the previous iteration
 * (see record_chain_one_cb). Needs chain_init (saxpy).
 */
static void wide_init(Ctx *c)
{
    c->have_wide = 1;
    c->wx = create_buffer(c, WIDE_N * sizeof(float));
    float *x = c->wx.map;
    for (uint32_t j = 0; j < WIDE_N; j++)
        x[j] = 1.0f;
    for (uint32_t i = 0; i < WIDE_WIDTH; i++) {
        c->wy[i] = create_buffer(c, WIDE_N * sizeof(float));
        memset(c->wy[i].map, 0, WIDE_N * sizeof(float));
        c->set_wide[i] = create_saxpy_set(c, &c->wx, &c->wy[i]);
    }
    c->cb_wide = alloc_cb(c);
    VkBufferMemoryBarrier bb[WIDE_WIDTH];
    for (uint32_t i = 0; i < WIDE_WIDTH; i++)
        bb[i] = y_barrier(&c->wy[i]);
    record_y_barriers(c->cb_wide, WIDE_WIDTH, bb);
    bind_saxpy(c, c->cb_wide, c->set_wide[0]);
    for (uint32_t i = 0; i < WIDE_WIDTH; i++) {
        if (i > 0)
            vkCmdBindDescriptorSets(c->cb_wide, VK_PIPELINE_BIND_POINT_COMPUTE,
                                    c->chain_pipe_layout, 0, 1, &c->set_wide[i], 0, NULL);
        vkCmdDispatch(c->cb_wide, WIDE_N / SAXPY_LOCAL_SIZE, 1, 1);
    }
    VK_CHECK(vkEndCommandBuffer(c->cb_wide));
    const uint32_t half = WIDE_WIDTH / 2;
    for (uint32_t h = 0; h < 2; h++) {
        VkCommandBuffer cb = c->cb_wide_half[h] = alloc_cb(c);
        record_y_barriers(cb, half, bb + h * half);
        for (uint32_t i = h * half; i < (h + 1) * half; i++) {
            if (i == h * half)
                bind_saxpy(c, cb, c->set_wide[i]);
            else
                vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->chain_pipe_layout, 0, 1,
                                        &c->set_wide[i], 0, NULL);
            vkCmdDispatch(cb, WIDE_N / SAXPY_LOCAL_SIZE, 1, 1);
        }
        VK_CHECK(vkEndCommandBuffer(cb));
        c->wide_tl[h] = create_timeline(c->device);
    }
}

/*
 * A descriptor set layout of n storage buffers at bindings 0..n-1 (compute
 * stage) and a pipeline layout of it alone, no push constants.
 */
static void storage_layout(Ctx *c, uint32_t n, VkDescriptorSetLayout *set_layout,
                           VkPipelineLayout *pipe_layout)
{
    VkDescriptorSetLayoutBinding binds[MAX_BINDINGS];
    if (n > MAX_BINDINGS)
        die("storage_layout: too many bindings");
    for (uint32_t i = 0; i < n; i++) {
        binds[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    VkDescriptorSetLayoutCreateInfo dslci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = n,
        .pBindings = binds,
    };
    VK_CHECK(vkCreateDescriptorSetLayout(c->device, &dslci, NULL, set_layout));
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = set_layout,
    };
    VK_CHECK(vkCreatePipelineLayout(c->device, &plci, NULL, pipe_layout));
}

/*
 * A barrier for a read after a write in the same command buffer or on the
 * same queue: COMPUTE_SHADER / SHADER_WRITE -> COMPUTE_SHADER / SHADER_READ
 * on the whole of b (y_barrier is the one for a write after a write).
 */
static VkBufferMemoryBarrier read_barrier(const Buffer *b)
{
    VkBufferMemoryBarrier bb = y_barrier(b);
    bb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    return bb;
}

/* Record the dispatch of diamond node set over DIAMOND_N floats: add_vec4
 * (DIAMOND_N / 4 / 256 workgroups) for s and the branches, sum8
 * (DIAMOND_N / 64) for the join. The pipeline is bound by the caller. */
static void diamond_dispatch(Ctx *c, VkCommandBuffer cb, VkDescriptorSet set, int join)
{
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE,
                            join ? c->sum8_pipe_layout : c->add_pipe_layout, 0, 1, &set, 0, NULL);
    vkCmdDispatch(cb, join ? DIAMOND_N / SUM8_LOCAL_SIZE : DIAMOND_N / 4 / ADD_VEC4_LOCAL_SIZE,
                  1, 1);
}

/* Record branches i = first, first+step, ... < DIAMOND_WIDTH (add_vec4 bound). */
static void diamond_branches(Ctx *c, VkCommandBuffer cb, uint32_t first, uint32_t step)
{
    for (uint32_t i = first; i < DIAMOND_WIDTH; i += step)
        diamond_dispatch(c, cb, c->set_dbranch[i], 0);
}

/*
 * The diamond of bench/graph_test.go (graph_diamond8_1q/2q): x[j] = j mod
 * 97, c[i] filled with i, s = x + x, b[i] = s + c[i], out = b[0] + ... +
 * b[7]; every buffer DIAMOND_N floats. add_vec4.spv and sum8.spv get a
 * layout each (3 and 9 storage buffers).
 *
 * diamond8_cmdbuf, one command buffer, as vkflow's graph compiled on one
 * queue records it (its schedule: s, barrier on s, the 8 branches, barrier
 * on the 8 b, the join), plus one leading barrier that orders the iteration
 * after the previous one on every buffer it writes (s, b[0..7], out: write
 * after write and write after read), see record_chain_one_cb; vkflow
 * submits that barrier as a prelude command buffer in the same batch.
 *
 * diamond8_2q, the four segments of vkflow's schedule on two queues. Each
 * starts with one barrier on what it touches that was last written on its
 * own VkQueue, as vkflow's hazard tracking (per physical queue) puts in
 * its preludes; what was written on the other queue comes through the
 * timeline wait:
 *   [0] queue:  barrier on s (after the previous run's s and its reads on
 *               this queue), s = x + x
 *   [1] queue:  barrier on s (read after [0]'s write) and on b[0, 2, 4, 6]
 *               (after the previous run's), the even branches
 *   [2] queue2: barrier on b[1, 3, 5, 7] (after the previous run's writes
 *               and the previous join's reads), the odd branches; s comes
 *               through the wait on [0] (on one VkQueue, also through
 *               [1]'s barrier on s)
 *   [3] queue2: barrier on b[1, 3, 5, 7] (read after [2]'s write) and out
 *               (after the previous run's), the join; b[0, 2, 4, 6] come
 *               through the wait on [1], and where queue2 is queue the
 *               barrier covers them too (as vkflow's prelude does there)
 */
static void diamond_init(Ctx *c, const char *shader_dir, const char *sum8_path)
{
    c->have_diamond = 1;
    storage_layout(c, 3, &c->add_set_layout, &c->add_pipe_layout);
    storage_layout(c, DIAMOND_WIDTH + 1, &c->sum8_set_layout, &c->sum8_pipe_layout);
    VkShaderModule mod = load_shader(c, shader_dir, "add_vec4.spv");
    c->pipe_add_vec4 = create_pipeline_layout(c, mod, 0, c->add_pipe_layout);
    vkDestroyShaderModule(c->device, mod, NULL);
    mod = load_shader_path(c, sum8_path);
    c->pipe_sum8 = create_pipeline_layout(c, mod, 0, c->sum8_pipe_layout);
    vkDestroyShaderModule(c->device, mod, NULL);

    const VkDeviceSize bytes = DIAMOND_N * sizeof(float);
    c->dx = create_buffer(c, bytes);
    c->ds = create_buffer(c, bytes);
    c->dout = create_buffer(c, bytes);
    float *x = c->dx.map;
    for (uint32_t j = 0; j < DIAMOND_N; j++)
        x[j] = (float)(j % 97u);
    memset(c->ds.map, 0, bytes);
    memset(c->dout.map, 0, bytes);
    {
        const Buffer *bufs[3] = {&c->dx, &c->dx, &c->ds};
        c->set_dsrc = create_set_of(c, c->add_set_layout, 3, bufs);
    }
    const Buffer *join[MAX_BINDINGS];
    for (uint32_t i = 0; i < DIAMOND_WIDTH; i++) {
        c->dc[i] = create_buffer(c, bytes);
        c->db[i] = create_buffer(c, bytes);
        float *ci = c->dc[i].map;
        for (uint32_t j = 0; j < DIAMOND_N; j++)
            ci[j] = (float)i;
        memset(c->db[i].map, 0, bytes);
        const Buffer *bufs[3] = {&c->ds, &c->dc[i], &c->db[i]};
        c->set_dbranch[i] = create_set_of(c, c->add_set_layout, 3, bufs);
        join[i] = &c->db[i];
    }
    join[DIAMOND_WIDTH] = &c->dout;
    c->set_djoin = create_set_of(c, c->sum8_set_layout, DIAMOND_WIDTH + 1, join);

    VkBufferMemoryBarrier bb[DIAMOND_WIDTH + 2];
    uint32_t nb;

    /* diamond8_cmdbuf */
    VkCommandBuffer cb = c->cb_diamond = alloc_cb(c);
    nb = 0;
    bb[nb++] = y_barrier(&c->ds);
    for (uint32_t i = 0; i < DIAMOND_WIDTH; i++)
        bb[nb++] = y_barrier(&c->db[i]);
    bb[nb++] = y_barrier(&c->dout);
    record_y_barriers(cb, nb, bb);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_add_vec4);
    diamond_dispatch(c, cb, c->set_dsrc, 0);
    bb[0] = read_barrier(&c->ds);
    record_y_barriers(cb, 1, bb);
    diamond_branches(c, cb, 0, 1);
    for (uint32_t i = 0; i < DIAMOND_WIDTH; i++)
        bb[i] = read_barrier(&c->db[i]);
    record_y_barriers(cb, DIAMOND_WIDTH, bb);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_sum8);
    diamond_dispatch(c, cb, c->set_djoin, 1);
    VK_CHECK(vkEndCommandBuffer(cb));

    /* diamond8_2q [0]: s */
    cb = c->cb_diamond_seg[0] = alloc_cb(c);
    bb[0] = y_barrier(&c->ds);
    record_y_barriers(cb, 1, bb);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_add_vec4);
    diamond_dispatch(c, cb, c->set_dsrc, 0);
    VK_CHECK(vkEndCommandBuffer(cb));
    /* [1]: the even branches; [2]: the odd ones */
    for (uint32_t h = 0; h < 2; h++) {
        cb = c->cb_diamond_seg[1 + h] = alloc_cb(c);
        nb = 0;
        if (h == 0)
            bb[nb++] = read_barrier(&c->ds);
        for (uint32_t i = h; i < DIAMOND_WIDTH; i += 2)
            bb[nb++] = y_barrier(&c->db[i]);
        record_y_barriers(cb, nb, bb);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_add_vec4);
        diamond_branches(c, cb, h, 2);
        VK_CHECK(vkEndCommandBuffer(cb));
    }
    /* [3]: the join; b[i] written on its own VkQueue get a barrier (all
     * of them where queue2 is queue) */
    cb = c->cb_diamond_seg[3] = alloc_cb(c);
    nb = 0;
    for (uint32_t i = 0; i < DIAMOND_WIDTH; i++)
        if (i % 2 == 1 || c->queues == 1)
            bb[nb++] = read_barrier(&c->db[i]);
    bb[nb++] = y_barrier(&c->dout);
    record_y_barriers(cb, nb, bb);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_sum8);
    diamond_dispatch(c, cb, c->set_djoin, 1);
    VK_CHECK(vkEndCommandBuffer(cb));

    for (uint32_t h = 0; h < 2; h++)
        c->diamond_tl[h] = create_timeline(c->device);
}

static void ctx_init(Ctx *c, const char *shader_dir, const char *sum8_path, unsigned needs)
{
    const int need_small = (needs & NEED_SMALL) != 0, need_big = (needs & NEED_BIG) != 0;
    const int need_wide = (needs & NEED_WIDE) != 0;
    const int need_chain = (needs & NEED_CHAIN) != 0 || need_wide;
    const int need_diamond = (needs & NEED_DIAMOND) != 0;
    memset(c, 0, sizeof *c);
    c->instance = create_instance();
    c->phys = pick_physical_device(c->instance);

    VkPhysicalDeviceDriverProperties drv = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 props = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &drv,
    };
    vkGetPhysicalDeviceProperties2(c->phys, &props);
    const VkPhysicalDeviceProperties *p = &props.properties;
    if (p->apiVersion < VK_API_VERSION_1_2)
        die("physical device does not support Vulkan 1.2");
    fprintf(stderr, "baseline: device %u: %s (Vulkan %u.%u.%u), driver %s %s\n",
            g_device_index, p->deviceName, VK_API_VERSION_MAJOR(p->apiVersion),
            VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion),
            drv.driverName, drv.driverInfo);
    c->max_group_count_x = p->limits.maxComputeWorkGroupCount[0];

    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
    };
    VkPhysicalDeviceFeatures2 f2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f12,
    };
    vkGetPhysicalDeviceFeatures2(c->phys, &f2);
    if (!f12.timelineSemaphore)
        die("device lacks the timelineSemaphore feature");

    vkGetPhysicalDeviceMemoryProperties(c->phys, &c->mem_props);
    c->family = find_compute_family(c->phys);
    {
        VkQueueFamilyProperties fp[32];
        uint32_t nf = 32;
        vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &nf, fp);
        c->queues = fp[c->family].queueCount >= 2 ? 2 : 1;
    }
    c->device = create_device(c->phys, c->family, c->queues);
    vkGetDeviceQueue(c->device, c->family, 0, &c->queue);
    vkGetDeviceQueue(c->device, c->family, c->queues - 1, &c->queue2);
    fprintf(stderr, "baseline: %u VkQueue(s) for the two-queue workloads\n", c->queues);
    c->timeline = create_timeline(c->device);

    if (!need_small && !need_big && !need_chain && !need_diamond)
        return;

    VkCommandPoolCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = c->family,
    };
    VK_CHECK(vkCreateCommandPool(c->device, &cpci, NULL, &c->cmd_pool));

    /* Sets: small, big, chain (3 buffers, 3, 2), the wide ones (2 each) and
     * the diamond's: s and the branches (3 each) and the join (9). */
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               8 + 2 * WIDE_WIDTH + 3 * (1 + DIAMOND_WIDTH) + DIAMOND_WIDTH + 1};
    VkDescriptorPoolCreateInfo dpci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 3 + WIDE_WIDTH + DIAMOND_WIDTH + 2,
        .poolSizeCount = 1,
        .pPoolSizes = &ps,
    };
    VK_CHECK(vkCreateDescriptorPool(c->device, &dpci, NULL, &c->desc_pool));

    /* Verification of the chains, wide8 and diamond8: make the GPU's
     * writes visible to the host. */
    c->cb_host_sync = alloc_cb(c);
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
    };
    vkCmdPipelineBarrier(c->cb_host_sync, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    VK_CHECK(vkEndCommandBuffer(c->cb_host_sync));

    if (need_chain)
        chain_init(c, shader_dir);
    if (need_wide)
        wide_init(c);
    if (need_diamond)
        diamond_init(c, shader_dir, sum8_path);
    if (!need_small && !need_big)
        return;

    VkDescriptorSetLayoutBinding binds[3];
    for (uint32_t i = 0; i < 3; i++) {
        binds[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    }
    VkDescriptorSetLayoutCreateInfo dslci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 3,
        .pBindings = binds,
    };
    VK_CHECK(vkCreateDescriptorSetLayout(c->device, &dslci, NULL, &c->set_layout));
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &c->set_layout,
    };
    VK_CHECK(vkCreatePipelineLayout(c->device, &plci, NULL, &c->pipe_layout));

    /* mul.spv is used by dispatch1024 and mul16m_kernel_scalar. */
    uint32_t scalar_groups_big = BIG_N / MUL_LOCAL_SIZE;
    int mul_needs_base = need_big && scalar_groups_big > c->max_group_count_x;
    if (mul_needs_base)
        fprintf(stderr,
                "baseline: note: mul.spv over %u floats needs %u workgroups > "
                "maxComputeWorkGroupCount[0]=%u; splitting with vkCmdDispatchBase\n",
                BIG_N, scalar_groups_big, c->max_group_count_x);
    VkShaderModule mod = load_shader(c, shader_dir, "mul.spv");
    c->pipe_mul = create_pipeline(c, mod, mul_needs_base);
    vkDestroyShaderModule(c->device, mod, NULL);

    if (need_small) {
        c->sa = create_buffer(c, SMALL_N * sizeof(float));
        c->sb = create_buffer(c, SMALL_N * sizeof(float));
        c->so = create_buffer(c, SMALL_N * sizeof(float));
        fill_inputs(c->sa.map, c->sb.map, SMALL_N);
        memset(c->so.map, 0, SMALL_N * sizeof(float));
        c->set_small = create_set(c, &c->sa, &c->sb, &c->so);
        c->cb_small = alloc_cb(c);
        record_mul(c, c->cb_small, c->pipe_mul, c->set_small, SMALL_N / MUL_LOCAL_SIZE, 0);
    }

    if (need_big) {
        c->have_big = 1;
        mod = load_shader(c, shader_dir, "mul_vec4.spv");
        c->pipe_mul_vec4 = create_pipeline(c, mod, 0);
        vkDestroyShaderModule(c->device, mod, NULL);

        size_t bytes = (size_t)BIG_N * sizeof(float);
        c->ba = create_buffer(c, bytes);
        c->bb = create_buffer(c, bytes);
        c->bo = create_buffer(c, bytes);
        c->src_a = xaligned_alloc(bytes);
        c->src_b = xaligned_alloc(bytes);
        c->result = xaligned_alloc(bytes);
        fill_inputs(c->src_a, c->src_b, BIG_N);
        memset(c->result, 0, bytes);
        /* Kernel-only workloads read whatever a and b hold: give them the
         * real inputs even if mul16m_e2e is filtered out. */
        memcpy(c->ba.map, c->src_a, bytes);
        memcpy(c->bb.map, c->src_b, bytes);
        memset(c->bo.map, 0, bytes);
        c->set_big = create_set(c, &c->ba, &c->bb, &c->bo);

        c->cb_vec4 = alloc_cb(c);
        record_mul(c, c->cb_vec4, c->pipe_mul_vec4, c->set_big,
                   BIG_N / 4 / MUL_VEC4_LOCAL_SIZE, 1);
        c->cb_scalar = alloc_cb(c);
        record_mul(c, c->cb_scalar, c->pipe_mul, c->set_big, scalar_groups_big, 1);
    }
}

static void ctx_destroy(Ctx *c)
{
    VK_CHECK(vkDeviceWaitIdle(c->device));
    destroy_buffer(c, &c->sa);
    destroy_buffer(c, &c->sb);
    destroy_buffer(c, &c->so);
    destroy_buffer(c, &c->ba);
    destroy_buffer(c, &c->bb);
    destroy_buffer(c, &c->bo);
    free(c->src_a);
    free(c->src_b);
    free(c->result);
    /* Destroying the pools frees the command buffers and descriptor sets. */
    if (c->cmd_pool)
        vkDestroyCommandPool(c->device, c->cmd_pool, NULL);
    if (c->desc_pool)
        vkDestroyDescriptorPool(c->device, c->desc_pool, NULL);
    if (c->pipe_mul)
        vkDestroyPipeline(c->device, c->pipe_mul, NULL);
    if (c->pipe_mul_vec4)
        vkDestroyPipeline(c->device, c->pipe_mul_vec4, NULL);
    if (c->pipe_layout)
        vkDestroyPipelineLayout(c->device, c->pipe_layout, NULL);
    if (c->set_layout)
        vkDestroyDescriptorSetLayout(c->device, c->set_layout, NULL);
    if (c->have_wide) {
        destroy_buffer(c, &c->wx);
        for (uint32_t i = 0; i < WIDE_WIDTH; i++)
            destroy_buffer(c, &c->wy[i]);
        for (uint32_t h = 0; h < 2; h++)
            vkDestroySemaphore(c->device, c->wide_tl[h], NULL);
    }
    if (c->have_diamond) {
        destroy_buffer(c, &c->dx);
        destroy_buffer(c, &c->ds);
        destroy_buffer(c, &c->dout);
        for (uint32_t i = 0; i < DIAMOND_WIDTH; i++) {
            destroy_buffer(c, &c->dc[i]);
            destroy_buffer(c, &c->db[i]);
        }
        vkDestroyPipeline(c->device, c->pipe_add_vec4, NULL);
        vkDestroyPipeline(c->device, c->pipe_sum8, NULL);
        vkDestroyPipelineLayout(c->device, c->add_pipe_layout, NULL);
        vkDestroyPipelineLayout(c->device, c->sum8_pipe_layout, NULL);
        vkDestroyDescriptorSetLayout(c->device, c->add_set_layout, NULL);
        vkDestroyDescriptorSetLayout(c->device, c->sum8_set_layout, NULL);
        for (uint32_t h = 0; h < 2; h++)
            vkDestroySemaphore(c->device, c->diamond_tl[h], NULL);
    }
    if (c->have_chain) {
        destroy_buffer(c, &c->cx);
        destroy_buffer(c, &c->cy);
        vkDestroyPipeline(c->device, c->pipe_saxpy, NULL);
        vkDestroyPipelineLayout(c->device, c->chain_pipe_layout, NULL);
        vkDestroyDescriptorSetLayout(c->device, c->chain_set_layout, NULL);
        vkDestroySemaphore(c->device, c->chain_timeline, NULL);
    }
    vkDestroySemaphore(c->device, c->timeline, NULL);
    vkDestroyDevice(c->device, NULL);
    vkDestroyInstance(c->instance, NULL);
}

/* ------------------------------------------------------------------------ */
/* Workloads: each runs n iterations                                        */
/* ------------------------------------------------------------------------ */

static void w_dispatch1024(Ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        submit_wait(c, c->cb_small);
    if (!c->small_verified) {
        verify("dispatch1024", c->sa.map, c->sb.map, c->so.map, SMALL_N);
        c->small_verified = 1;
    }
}

/* dispatch1024 with the polling host wait (submit_poll_wait). Not named
 * dispatch1024_*: -run dispatch1024 would select it too. */
static void w_dispatch_poll1024(Ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        submit_poll_wait(c, c->cb_small);
    if (!c->small_verified) {
        verify("dispatch_poll1024", c->sa.map, c->sb.map, c->so.map, SMALL_N);
        c->small_verified = 1;
    }
}

static void w_empty_submit(Ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        submit_wait(c, VK_NULL_HANDLE);
}

static void w_mul16m_e2e(Ctx *c, uint64_t n)
{
    const size_t bytes = (size_t)BIG_N * sizeof(float);
    for (uint64_t i = 0; i < n; i++) {
        memcpy(c->ba.map, c->src_a, bytes);
        memcpy(c->bb.map, c->src_b, bytes);
        submit_wait(c, c->cb_vec4);
        memcpy(c->result, c->bo.map, bytes);
        if (!c->e2e_verified) {
            verify("mul16m_e2e", c->src_a, c->src_b, c->result, BIG_N);
            c->e2e_verified = 1;
        }
    }
}

static void w_mul16m_kernel_vec4(Ctx *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        submit_wait(c, c->cb_vec4);
}

static void w_mul16m_kernel_scalar(Ctx *c, uint64_t n)
{
    if (!c->scalar_verified && n > 0) {
        /* Clear the output so a stale vec4 result cannot pass the check. */
        memset(c->bo.map, 0, (size_t)BIG_N * sizeof(float));
        submit_wait(c, c->cb_scalar);
        verify("mul16m_kernel_scalar", c->src_a, c->src_b, c->bo.map, BIG_N);
        c->scalar_verified = 1;
        n--;
    }
    for (uint64_t i = 0; i < n; i++)
        submit_wait(c, c->cb_scalar);
}

static void w_manager_create(Ctx *c, uint64_t n)
{
    (void)c;
    for (uint64_t i = 0; i < n; i++) {
        VkInstance inst = create_instance();
        VkPhysicalDevice phys = pick_physical_device(inst);
        uint32_t family = find_compute_family(phys);
        VkDevice dev = create_device(phys, family, 1);
        VkQueue q;
        vkGetDeviceQueue(dev, family, 0, &q);
        VkSemaphore sem = create_timeline(dev);
        vkDestroySemaphore(dev, sem, NULL);
        vkDestroyDevice(dev, NULL);
        vkDestroyInstance(inst, NULL);
    }
}

/* Check that all n elements of y equal want exactly. */
static void verify_all(const char *what, const float *y, uint32_t n, float want)
{
    for (uint32_t j = 0; j < n; j++) {
        if (y[j] != want) {
            fprintf(stderr, "baseline: %s: verification failed at %u: got %.9g want %.9g\n",
                    what, j, (double)y[j], (double)want);
            exit(1);
        }
    }
    fprintf(stderr, "baseline: %s: verified %u elements\n", what, n);
}

/*
 * One chain: CHAIN_LEN dependent dispatches, dispatch k alternating between
 * the two command buffers (two logical queues in vkflow; both go to the one
 * VkQueue here), each submit waiting on the chain timeline for base+k at
 * the compute stage and signalling base+k+1, all submitted back to back
 * without host waits; then one vkWaitSemaphores for the last value.
 */
static void chain_once(Ctx *c, int two)
{
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    for (uint32_t k = 0; k < CHAIN_LEN; k++) {
        uint64_t wait = c->chain_value, signal = wait + 1;
        submit_timeline(two && (k & 1) ? c->queue2 : c->queue, c->cb_chain[k & 1], c->chain_timeline,
                        wait, stage, c->chain_timeline, signal);
        c->chain_value = signal;
    }
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &c->chain_timeline,
        .pValues = &c->chain_value,
    };
    VK_CHECK(vkWaitSemaphores(c->device, &wi, UINT64_MAX));
}

static void chain_run(Ctx *c, uint64_t n, int two, int *verified, const char *name)
{
    uint64_t i = 0;
    if (!*verified && n > 0) {
        /* From y = 0, x = alpha = 1: one chain leaves exactly CHAIN_LEN in
         * every element. */
        memset(c->cy.map, 0, CHAIN_N * sizeof(float));
        chain_once(c, two);
        submit_wait(c, c->cb_host_sync);
        verify_all(name, c->cy.map, CHAIN_N, (float)CHAIN_LEN);
        *verified = 1;
        i = 1;
    }
    for (; i < n; i++)
        chain_once(c, two);
}

/* chain1000: the chain's dispatches alternate between the two VkQueues
 * (one where the device has one), as vkflow's two logical queues map onto
 * physical queues: every hop waits on the GPU for the other queue. */
static void w_chain1000(Ctx *c, uint64_t n) { chain_run(c, n, 1, &c->chain_verified, "chain1000"); }

/* chain1000_1q: the same chain with every submit on one VkQueue. */
static void w_chain1000_1q(Ctx *c, uint64_t n) { chain_run(c, n, 0, &c->chain_1q_verified, "chain1000_1q"); }

/* chain1000_cmdbuf: one submit of the whole recorded chain + host wait. */
static void w_chain1000_cmdbuf(Ctx *c, uint64_t n)
{
    uint64_t i = 0;
    if (!c->chain_one_verified && n > 0) {
        memset(c->cy.map, 0, CHAIN_N * sizeof(float));
        submit_wait(c, c->cb_chain_one);
        submit_wait(c, c->cb_host_sync);
        verify_all("chain1000_cmdbuf", c->cy.map, CHAIN_N, (float)CHAIN_LEN);
        c->chain_one_verified = 1;
        i = 1;
    }
    for (; i < n; i++)
        submit_wait(c, c->cb_chain_one);
}

/* wide8_cmdbuf: one submit of the WIDE_WIDTH dispatches + host wait. */
static void w_wide8_cmdbuf(Ctx *c, uint64_t n)
{
    uint64_t i = 0;
    if (!c->wide_verified && n > 0) {
        /* y[k] starts at k, so a dispatch on the wrong buffer shows. */
        for (uint32_t k = 0; k < WIDE_WIDTH; k++) {
            float *y = c->wy[k].map;
            for (uint32_t j = 0; j < WIDE_N; j++)
                y[j] = (float)k;
        }
        submit_wait(c, c->cb_wide);
        submit_wait(c, c->cb_host_sync);
        for (uint32_t k = 0; k < WIDE_WIDTH; k++)
            verify_all("wide8_cmdbuf", c->wy[k].map, WIDE_N, (float)k + 1.0f);
        c->wide_verified = 1;
        i = 1;
    }
    for (; i < n; i++)
        submit_wait(c, c->cb_wide);
}

/* wide8_2q: half the dispatches on each VkQueue (one where the device has
 * one), as vkflow's graph_wide8_2q spreads them; one host wait for both. */
static void wide2_once(Ctx *c)
{
    for (uint32_t h = 0; h < 2; h++) {
        submit_timeline(h ? c->queue2 : c->queue, c->cb_wide_half[h], VK_NULL_HANDLE, 0, 0, c->wide_tl[h],
                        ++c->wide_value[h]);
    }
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 2,
        .pSemaphores = c->wide_tl,
        .pValues = c->wide_value,
    };
    VK_CHECK(vkWaitSemaphores(c->device, &wi, UINT64_MAX));
}

static void w_wide8_2q(Ctx *c, uint64_t n)
{
    uint64_t i = 0;
    if (!c->wide2_verified && n > 0) {
        for (uint32_t k = 0; k < WIDE_WIDTH; k++) {
            float *y = c->wy[k].map;
            for (uint32_t j = 0; j < WIDE_N; j++)
                y[j] = (float)k;
        }
        wide2_once(c);
        submit_wait(c, c->cb_host_sync);
        for (uint32_t k = 0; k < WIDE_WIDTH; k++)
            verify_all("wide8_2q", c->wy[k].map, WIDE_N, (float)k + 1.0f);
        c->wide2_verified = 1;
        i = 1;
    }
    for (; i < n; i++)
        wide2_once(c);
}

/* Clear s, b[i] and out, so that a stale result cannot pass verification. */
static void diamond_clear(Ctx *c)
{
    const size_t bytes = DIAMOND_N * sizeof(float);
    memset(c->ds.map, 0, bytes);
    memset(c->dout.map, 0, bytes);
    for (uint32_t i = 0; i < DIAMOND_WIDTH; i++)
        memset(c->db[i].map, 0, bytes);
}

/* Check every b[i][j] == 2*x[j] + i and out[j] == 16*x[j] + 28 (0+1+...+7),
 * all exact in float; the GPU's writes were made visible to the host. */
static void diamond_verify(Ctx *c, const char *name)
{
    const float *b[DIAMOND_WIDTH];
    for (uint32_t i = 0; i < DIAMOND_WIDTH; i++)
        b[i] = c->db[i].map;
    const float *out = c->dout.map;
    for (uint32_t j = 0; j < DIAMOND_N; j++) {
        float x = (float)(j % 97u);
        for (uint32_t i = 0; i < DIAMOND_WIDTH; i++) {
            if (b[i][j] != 2.0f * x + (float)i) {
                fprintf(stderr, "baseline: %s: verification failed at b%u[%u]: got %.9g want %.9g\n",
                        name, i, j, (double)b[i][j], (double)(2.0f * x + (float)i));
                exit(1);
            }
        }
        if (out[j] != 16.0f * x + 28.0f) {
            fprintf(stderr, "baseline: %s: verification failed at %u: got %.9g want %.9g\n",
                    name, j, (double)out[j], (double)(16.0f * x + 28.0f));
            exit(1);
        }
    }
    fprintf(stderr, "baseline: %s: verified %u elements (and the 8 branches)\n", name, DIAMOND_N);
}

/* diamond8_cmdbuf: one submit of the whole diamond + the polling host wait,
 * as vkflow's Exec.Run waits (graph_diamond8_1q). */
static void w_diamond8_cmdbuf(Ctx *c, uint64_t n)
{
    uint64_t i = 0;
    if (!c->diamond_verified && n > 0) {
        diamond_clear(c);
        submit_poll_wait(c, c->cb_diamond);
        submit_wait(c, c->cb_host_sync);
        diamond_verify(c, "diamond8_cmdbuf");
        c->diamond_verified = 1;
        i = 1;
    }
    for (; i < n; i++)
        submit_poll_wait(c, c->cb_diamond);
}

/*
 * One run of diamond8_2q: the four segments submitted in vkflow's plan
 * order, one vkQueueSubmit each, segments 0 and 1 to queue, 2 and 3 to
 * queue2 (the same VkQueue where the device has one). Each signals the next
 * value of its queue's timeline and waits (stage ALL_COMMANDS, as vkflow's
 * waits) for:
 *   [0] the previous run's [2] (it read s, which [0] writes)
 *   [1] the previous run's [3] (it read b[0, 2, 4, 6], which [1] writes)
 *   [2] this run's [0] (s)
 *   [3] this run's [1] (b[0, 2, 4, 6])
 * Before the first run the previous values are 0, which a timeline has
 * already reached (vkflow leaves those waits out). Then the polling host
 * wait for the last value of each VkQueue, as Pending.Wait waits on each
 * physical queue's last value: [1]'s and [3]'s on two queues, [3]'s alone
 * on one (its signal comes after everything submitted before it there).
 */
static void diamond2_once(Ctx *c)
{
    static const uint32_t queue_of[4] = {0, 0, 1, 1};
    /* The segment each one waits for: the previous run's for [0] and [1],
     * this run's for [2] and [3]. */
    static const uint32_t waits_on[4] = {2, 3, 0, 1};
    uint64_t prev[4];
    memcpy(prev, c->diamond_seg, sizeof prev);
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t q = queue_of[k], w = waits_on[k];
        uint64_t wait = k < 2 ? prev[w] : c->diamond_seg[w];
        uint64_t signal = ++c->diamond_value[q];
        submit_timeline(q ? c->queue2 : c->queue, c->cb_diamond_seg[k], c->diamond_tl[queue_of[w]], wait,
                        stage, c->diamond_tl[q], signal);
        c->diamond_seg[k] = signal;
    }
    if (c->queues == 2) {
        const uint64_t last[2] = {c->diamond_seg[1], c->diamond_seg[3]};
        poll_wait(c, 2, c->diamond_tl, last);
    } else {
        poll_wait(c, 1, &c->diamond_tl[1], &c->diamond_seg[3]);
    }
}

static void w_diamond8_2q(Ctx *c, uint64_t n)
{
    uint64_t i = 0;
    if (!c->diamond2_verified && n > 0) {
        diamond_clear(c);
        diamond2_once(c);
        /* out is written on queue2: make it visible to the host there. */
        uint64_t value = submit_signal_q(c, c->queue2, c->cb_host_sync);
        poll_wait(c, 1, &c->timeline, &value);
        diamond_verify(c, "diamond8_2q");
        c->diamond2_verified = 1;
        i = 1;
    }
    for (; i < n; i++)
        diamond2_once(c);
}

/* ------------------------------------------------------------------------ */
/* Harness                                                                  */
/* ------------------------------------------------------------------------ */

typedef void (*WorkFn)(Ctx *, uint64_t);

typedef struct {
    const char *name;
    WorkFn fn;
    double bytes_per_op; /* 0: no GB/s column */
    unsigned needs;           /* NEED_* bits */
    double dispatches_per_op; /* 0: no ns/dispatch column */
} Workload;

static const Workload workloads[] = {
    {"dispatch1024", w_dispatch1024, 0, NEED_SMALL, 0},
    {"dispatch_poll1024", w_dispatch_poll1024, 0, NEED_SMALL, 0},
    {"empty_submit", w_empty_submit, 0, 0, 0},
    {"mul16m_e2e", w_mul16m_e2e, BYTES_PER_ELEMENT * BIG_N, NEED_BIG, 0},
    {"mul16m_kernel_vec4", w_mul16m_kernel_vec4, BYTES_PER_ELEMENT * BIG_N, NEED_BIG, 0},
    {"mul16m_kernel_scalar", w_mul16m_kernel_scalar, BYTES_PER_ELEMENT * BIG_N, NEED_BIG, 0},
    {"chain1000", w_chain1000, 0, NEED_CHAIN, CHAIN_LEN},
    {"chain1000_1q", w_chain1000_1q, 0, NEED_CHAIN, CHAIN_LEN},
    {"chain1000_cmdbuf", w_chain1000_cmdbuf, 0, NEED_CHAIN, CHAIN_LEN},
    {"wide8_cmdbuf", w_wide8_cmdbuf, 0, NEED_CHAIN | NEED_WIDE, 0},
    {"wide8_2q", w_wide8_2q, 0, NEED_CHAIN | NEED_WIDE, 0},
    {"diamond8_cmdbuf", w_diamond8_cmdbuf, 0, NEED_DIAMOND, 0},
    {"diamond8_2q", w_diamond8_2q, 0, NEED_DIAMOND, 0},
    {"manager_create", w_manager_create, 0, 0, 0},
};
#define NUM_WORKLOADS (sizeof workloads / sizeof workloads[0])

/* A workload and its context, as the harness's bench_fn sees them. */
typedef struct {
    Ctx *c;
    WorkFn fn;
} Bound;

static void run_bound(void *p, uint64_t n)
{
    Bound *b = p;
    b->fn(b->c, n);
}

static void run_workload(Ctx *c, const Workload *w, double benchtime_s, long ncpu)
{
    Bound b = {c, w->fn};
    uint64_t iters = bench_calibrate(run_bound, &b, benchtime_s);
    double ns_op[BENCH_BATCHES];
    bench_batches(run_bound, &b, iters, ns_op);
    double med = ns_op[BENCH_BATCHES / 2];

    printf("BenchmarkC/%s-%ld\t%llu\t%.0f ns/op", w->name, ncpu,
           (unsigned long long)iters, med);
    if (w->bytes_per_op > 0)
        printf("\t%.2f GB/s", w->bytes_per_op / med);
    if (w->dispatches_per_op > 0)
        printf("\t%.0f ns/dispatch", med / w->dispatches_per_op);
    printf("\n");
    fflush(stdout);
    fprintf(stderr, "baseline: %s: batches ns/op min %.0f median %.0f max %.0f\n",
            w->name, ns_op[0], med, ns_op[BENCH_BATCHES - 1]);
}

static void usage(void)
{
    fprintf(stderr, "usage: baseline SHADER_DIR [-benchtime SECONDS] [-run SUBSTRING] [-sum8 PATH]\n");
    exit(2);
}

static double parse_benchtime(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0) || !isfinite(v))
        usage();
    if (*end == 's' && end[1] == '\0')
        end++; /* accept Go-style "1s" */
    if (*end != '\0')
        usage();
    return v;
}

int main(int argc, char **argv)
{
    const char *shader_dir = NULL;
    const char *filter = NULL;
    const char *sum8_path = DEFAULT_SUM8;
    double benchtime = 1.0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a++; /* accept --flag as well */
        if (strcmp(a, "-benchtime") == 0) {
            if (++i >= argc)
                usage();
            benchtime = parse_benchtime(argv[i]);
        } else if (strncmp(a, "-benchtime=", 11) == 0) {
            benchtime = parse_benchtime(a + 11);
        } else if (strcmp(a, "-run") == 0) {
            if (++i >= argc)
                usage();
            filter = argv[i];
        } else if (strncmp(a, "-run=", 5) == 0) {
            filter = a + 5;
        } else if (strcmp(a, "-sum8") == 0) {
            if (++i >= argc)
                usage();
            sum8_path = argv[i];
        } else if (strncmp(a, "-sum8=", 6) == 0) {
            sum8_path = a + 6;
        } else if (a[0] == '-') {
            usage();
        } else if (!shader_dir) {
            shader_dir = a;
        } else {
            usage();
        }
    }
    if (!shader_dir)
        usage();

    const char *dev_env = getenv("BASELINE_DEVICE");
    if (dev_env && *dev_env) {
        char *end;
        unsigned long v = strtoul(dev_env, &end, 10);
        if (*end != '\0' || v > 1000)
            die("BASELINE_DEVICE must be a device index");
        g_device_index = (uint32_t)v;
    }

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;

    int selected[NUM_WORKLOADS];
    unsigned needs = 0;
    for (size_t i = 0; i < NUM_WORKLOADS; i++) {
        selected[i] = !filter || strstr(workloads[i].name, filter) != NULL;
        if (selected[i])
            needs |= workloads[i].needs;
    }

    Ctx ctx;
    ctx_init(&ctx, shader_dir, sum8_path, needs);
    for (size_t i = 0; i < NUM_WORKLOADS; i++)
        if (selected[i])
            run_workload(&ctx, &workloads[i], benchtime, ncpu);
    ctx_destroy(&ctx);
    return 0;
}
