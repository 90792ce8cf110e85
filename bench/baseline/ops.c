/*
 * ops.c - raw C Vulkan baseline for the operator benchmarks (issue 11).
 *
 * Build:
 *   cc -O2 -std=c11 -Wall -Wextra -o OUT bench/baseline/ops.c -lvulkan -lm
 *
 * Usage:
 *   ops ADD_VEC4_SPV COPY_VEC4_SPV [-benchtime SECONDS] [-run SUBSTRING]
 *
 * ADD_VEC4_SPV is shaders/add_vec4.spv (o = a + b over vec4, local size
 * 256, set 0 bindings a, b, o); COPY_VEC4_SPV is bench/testdata/copy_vec4.spv
 * (o = a over vec4, local size 256, bindings a, o). Workloads:
 *
 *   add_1m    o = a + b over 1Mi floats    GB/s counts 12 bytes per element
 *   add_16m   o = a + b over 16Mi floats   (a and b read, o written)
 *   copy_16m  o = a over 16Mi floats       GB/s counts 8 bytes per element
 *                                          (a read, o written)
 *
 * One iteration submits a command buffer recorded once and waits on a
 * timeline semaphore. The command buffer is what vkflow records for an
 * op's Run: a barrier ordering the dispatch after the previous iteration
 * (compute writes -> compute reads and writes), the dispatch (n/4/256
 * workgroups), and a barrier making the output readable on the host
 * (compute writes -> host reads). The first iteration of each workload is
 * verified exactly against the CPU.
 *
 * stdout: one line per workload in Go's benchmark format,
 *   BenchmarkC/<name>-<ncpu>\t<iters>\t<ns> ns/op\t<x> GB/s
 * where ns/op is the median of 5 batches. stderr: device, verification,
 * per-batch spread. See bench/baseline/README.md.
 */
#define _POSIX_C_SOURCE 200809L

#include <vulkan/vulkan.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define CHECK(expr)                                                           \
    do {                                                                      \
        VkResult check_r_ = (expr);                                           \
        if (check_r_ != VK_SUCCESS) {                                         \
            fprintf(stderr, "ops: %s failed: VkResult %d (line %d)\n", #expr, \
                    (int)check_r_, __LINE__);                                 \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static void fail(const char *msg)
{
    fprintf(stderr, "ops: %s\n", msg);
    exit(1);
}

#define LOCAL_SIZE 256u /* both shaders' local_size_x, in vec4s */
#define N_1M (1u << 20)
#define N_16M (16u << 20)

typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    float *map;
} Buf;

enum { ADD, COPY };

/* A workload: its buffers, descriptor set and command buffer. */
typedef struct {
    const char *name;
    int kind;           /* ADD: o = a + b; COPY: o = a */
    uint32_t n;         /* floats */
    double bytes_per_n; /* bytes counted per element for GB/s */
    Buf a, b, o;        /* b unused by COPY */
    VkDescriptorSet set;
    VkCommandBuffer cb;
    int verified;
} Work;

typedef struct {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    VkSemaphore timeline;
    uint64_t value;
    VkPhysicalDeviceMemoryProperties mem;
    VkCommandPool cmd_pool;
    VkDescriptorPool desc_pool;
    VkDescriptorSetLayout set_layout[2]; /* [ADD]: 3 bindings, [COPY]: 2 */
    VkPipelineLayout pipe_layout[2];
    VkPipeline pipe[2];
} Ctx;

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static void init_device(Ctx *c)
{
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "vkflow-ops-baseline",
        .apiVersion = VK_API_VERSION_1_2,
    };
    VkInstanceCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    CHECK(vkCreateInstance(&ici, NULL, &c->instance));

    uint32_t count = 1;
    VkResult r = vkEnumeratePhysicalDevices(c->instance, &count, &c->phys);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        CHECK(r);
    if (count == 0)
        fail("no Vulkan physical devices");
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(c->phys, &props);
    fprintf(stderr, "ops: device 0: %s\n", props.deviceName);
    vkGetPhysicalDeviceMemoryProperties(c->phys, &c->mem);

    VkQueueFamilyProperties fams[16];
    uint32_t nfam = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &nfam, fams);
    uint32_t family = UINT32_MAX;
    for (uint32_t i = 0; i < nfam && family == UINT32_MAX; i++)
        if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            family = i;
    if (family == UINT32_MAX)
        fail("no compute queue family");

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
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
    CHECK(vkCreateDevice(c->phys, &dci, NULL, &c->device));
    vkGetDeviceQueue(c->device, family, 0, &c->queue);

    VkSemaphoreTypeCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
        .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
    };
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
    CHECK(vkCreateSemaphore(c->device, &sci, NULL, &c->timeline));

    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = family,
    };
    CHECK(vkCreateCommandPool(c->device, &pci, NULL, &c->cmd_pool));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 16};
    VkDescriptorPoolCreateInfo dpci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 8,
        .poolSizeCount = 1,
        .pPoolSizes = &ps,
    };
    CHECK(vkCreateDescriptorPool(c->device, &dpci, NULL, &c->desc_pool));
}

static VkShaderModule read_module(Ctx *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ops: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    uint32_t *code = malloc(1 << 20);
    if (!code)
        fail("out of host memory");
    size_t len = fread(code, 1, 1 << 20, f);
    fclose(f);
    if (len == 0 || len % 4 != 0 || len == (1 << 20)) {
        fprintf(stderr, "ops: %s: bad SPIR-V size %zu\n", path, len);
        exit(1);
    }
    VkShaderModuleCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = len,
        .pCode = code,
    };
    VkShaderModule m;
    CHECK(vkCreateShaderModule(c->device, &ci, NULL, &m));
    free(code);
    return m;
}

/* The pipeline of kind k from the SPIR-V file at path, with `bindings`
 * storage buffers at set 0. */
static void init_pipeline(Ctx *c, int k, const char *path, uint32_t bindings)
{
    VkDescriptorSetLayoutBinding b[3];
    for (uint32_t i = 0; i < bindings; i++)
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = bindings,
        .pBindings = b,
    };
    CHECK(vkCreateDescriptorSetLayout(c->device, &lci, NULL, &c->set_layout[k]));
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &c->set_layout[k],
    };
    CHECK(vkCreatePipelineLayout(c->device, &plci, NULL, &c->pipe_layout[k]));
    VkShaderModule m = read_module(c, path);
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = m,
            .pName = "main",
        },
        .layout = c->pipe_layout[k],
    };
    CHECK(vkCreateComputePipelines(c->device, VK_NULL_HANDLE, 1, &ci, NULL, &c->pipe[k]));
    vkDestroyShaderModule(c->device, m, NULL);
}

/* A persistently mapped HOST_VISIBLE|HOST_COHERENT buffer (DEVICE_LOCAL
 * preferred) of n floats. */
static Buf new_buf(Ctx *c, uint32_t n)
{
    Buf b = {.size = (VkDeviceSize)n * sizeof(float)};
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = b.size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
    };
    CHECK(vkCreateBuffer(c->device, &bci, NULL, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(c->device, b.buffer, &req);
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags want[2] = {host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, host};
    uint32_t type = UINT32_MAX;
    for (int w = 0; w < 2 && type == UINT32_MAX; w++)
        for (uint32_t i = 0; i < c->mem.memoryTypeCount && type == UINT32_MAX; i++)
            if ((req.memoryTypeBits & (1u << i)) &&
                (c->mem.memoryTypes[i].propertyFlags & want[w]) == want[w])
                type = i;
    if (type == UINT32_MAX)
        fail("no HOST_VISIBLE|HOST_COHERENT memory type");
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    CHECK(vkAllocateMemory(c->device, &mai, NULL, &b.memory));
    CHECK(vkBindBufferMemory(c->device, b.buffer, b.memory, 0));
    void *p;
    CHECK(vkMapMemory(c->device, b.memory, 0, VK_WHOLE_SIZE, 0, &p));
    b.map = p;
    return b;
}

static void free_buf(Ctx *c, Buf *b)
{
    if (b->buffer == VK_NULL_HANDLE)
        return;
    vkUnmapMemory(c->device, b->memory);
    vkDestroyBuffer(c->device, b->buffer, NULL);
    vkFreeMemory(c->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

/* The inputs of bench/ops_test.go (and bench_test.go's fillInputs): exact
 * sums and copies, no denormals. */
static void fill(float *a, float *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = i * 2654435761u;
        a[i] = (float)((h >> 8) & 0xFFFF) * (1.0f / 1024.0f) - 32.0f + 0.3f;
        b[i] = (float)((h >> 16) & 0x3FF) * 0.01f + 0.5f;
    }
}

/* Memory barrier src -> dst at the given stages. */
static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = src,
        .dstAccessMask = dst,
    };
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void init_work(Ctx *c, Work *w)
{
    w->a = new_buf(c, w->n);
    if (w->kind == ADD)
        w->b = new_buf(c, w->n);
    w->o = new_buf(c, w->n);
    float *scratch = NULL;
    if (w->kind == COPY) {
        scratch = malloc((size_t)w->n * sizeof(float));
        if (!scratch)
            fail("out of host memory");
    }
    fill(w->a.map, w->kind == ADD ? w->b.map : scratch, w->n);
    free(scratch);
    memset(w->o.map, 0, (size_t)w->o.size);

    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = c->desc_pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &c->set_layout[w->kind],
    };
    CHECK(vkAllocateDescriptorSets(c->device, &ai, &w->set));
    const Buf *bufs[3] = {&w->a, &w->b, &w->o};
    if (w->kind == COPY)
        bufs[1] = &w->o;
    uint32_t nb = w->kind == ADD ? 3 : 2;
    VkDescriptorBufferInfo infos[3];
    for (uint32_t i = 0; i < nb; i++)
        infos[i] = (VkDescriptorBufferInfo){bufs[i]->buffer, 0, bufs[i]->size};
    VkWriteDescriptorSet wr = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = w->set,
        .descriptorCount = nb,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = infos,
    };
    vkUpdateDescriptorSets(c->device, 1, &wr, 0, NULL);

    VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = c->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    CHECK(vkAllocateCommandBuffers(c->device, &cai, &w->cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(w->cb, &bi));
    /* Order this iteration's write of o after the previous iteration's. */
    barrier(w->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdBindPipeline(w->cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe[w->kind]);
    vkCmdBindDescriptorSets(w->cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe_layout[w->kind], 0,
                            1, &w->set, 0, NULL);
    vkCmdDispatch(w->cb, w->n / 4 / LOCAL_SIZE, 1, 1);
    barrier(w->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    CHECK(vkEndCommandBuffer(w->cb));
}

static void free_work(Ctx *c, Work *w)
{
    free_buf(c, &w->a);
    free_buf(c, &w->b);
    free_buf(c, &w->o);
}

/* ------------------------------------------------------------------------ */
/* Running                                                                  */
/* ------------------------------------------------------------------------ */

static void submit_wait(Ctx *c, VkCommandBuffer cb)
{
    uint64_t v = ++c->value;
    VkTimelineSemaphoreSubmitInfo tsi = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &v,
    };
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &tsi,
        .commandBufferCount = 1,
        .pCommandBuffers = &cb,
        .signalSemaphoreCount = 1,
        .pSignalSemaphores = &c->timeline,
    };
    CHECK(vkQueueSubmit(c->queue, 1, &si, VK_NULL_HANDLE));
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &c->timeline,
        .pValues = &v,
    };
    CHECK(vkWaitSemaphores(c->device, &wi, UINT64_MAX));
}

/* Runs w once from a zeroed output and checks every element exactly. */
static void verify(Ctx *c, Work *w)
{
    memset(w->o.map, 0, (size_t)w->o.size);
    submit_wait(c, w->cb);
    for (uint32_t i = 0; i < w->n; i++) {
        float want = w->kind == ADD ? w->a.map[i] + w->b.map[i] : w->a.map[i];
        if (w->o.map[i] != want) {
            fprintf(stderr, "ops: %s: verification failed at %u: got %.9g want %.9g\n",
                    w->name, i, (double)w->o.map[i], (double)want);
            exit(1);
        }
    }
    fprintf(stderr, "ops: %s: verified %u elements\n", w->name, w->n);
    w->verified = 1;
}

/* A workload and its context, as the harness's bench_fn sees them. */
typedef struct {
    Ctx *c;
    Work *w;
} Bound;

static void run_bound(void *p, uint64_t n)
{
    Bound *b = p;
    for (uint64_t i = 0; i < n; i++)
        submit_wait(b->c, b->w->cb);
}

/* Verification, then the harness (harness.h); prints the median batch's
 * ns/op and GB/s. */
static void run(Ctx *c, Work *w, double benchtime_s, long ncpu)
{
    if (!w->verified)
        verify(c, w);
    Bound b = {c, w};
    uint64_t iters = bench_calibrate(run_bound, &b, benchtime_s);
    double ns[BENCH_BATCHES];
    bench_batches(run_bound, &b, iters, ns);
    double med = ns[BENCH_BATCHES / 2];
    printf("BenchmarkC/%s-%ld\t%llu\t%.0f ns/op\t%.2f GB/s\n", w->name, ncpu,
           (unsigned long long)iters, med, w->bytes_per_n * w->n / med);
    fflush(stdout);
    fprintf(stderr, "ops: %s: batches ns/op min %.0f median %.0f max %.0f\n", w->name, ns[0],
            med, ns[BENCH_BATCHES - 1]);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: ops ADD_VEC4_SPV COPY_VEC4_SPV [-benchtime SECONDS] [-run SUBSTRING]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int npaths = 0;
    const char *filter = NULL;
    double benchtime = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-benchtime") == 0 && i + 1 < argc) {
            char *end;
            benchtime = strtod(argv[++i], &end);
            if (*end == 's')
                end++;
            if (*end != '\0' || !(benchtime > 0) || !isfinite(benchtime))
                usage();
        } else if (strcmp(argv[i], "-run") == 0 && i + 1 < argc) {
            filter = argv[++i];
        } else if (argv[i][0] != '-' && npaths < 2) {
            paths[npaths++] = argv[i];
        } else {
            usage();
        }
    }
    if (npaths != 2)
        usage();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;

    Ctx c = {0};
    init_device(&c);
    init_pipeline(&c, ADD, paths[0], 3);
    init_pipeline(&c, COPY, paths[1], 2);

    Work works[] = {
        {.name = "add_1m", .kind = ADD, .n = N_1M, .bytes_per_n = 12},
        {.name = "add_16m", .kind = ADD, .n = N_16M, .bytes_per_n = 12},
        {.name = "copy_16m", .kind = COPY, .n = N_16M, .bytes_per_n = 8},
    };
    const size_t nworks = sizeof works / sizeof works[0];
    for (size_t i = 0; i < nworks; i++) {
        if (filter && !strstr(works[i].name, filter))
            continue;
        init_work(&c, &works[i]);
        run(&c, &works[i], benchtime, ncpu);
    }

    CHECK(vkDeviceWaitIdle(c.device));
    for (size_t i = 0; i < nworks; i++)
        free_work(&c, &works[i]);
    vkDestroyCommandPool(c.device, c.cmd_pool, NULL);
    vkDestroyDescriptorPool(c.device, c.desc_pool, NULL);
    for (int k = 0; k < 2; k++) {
        vkDestroyPipeline(c.device, c.pipe[k], NULL);
        vkDestroyPipelineLayout(c.device, c.pipe_layout[k], NULL);
        vkDestroyDescriptorSetLayout(c.device, c.set_layout[k], NULL);
    }
    vkDestroySemaphore(c.device, c.timeline, NULL);
    vkDestroyDevice(c.device, NULL);
    vkDestroyInstance(c.instance, NULL);
    return 0;
}
