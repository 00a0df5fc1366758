// SPDX-License-Identifier: GPL-2.0
/*
 * krtfix: the article's controlled overlap fixture ("Propose a controlled overlap fixture") as a
 * disposable kernel module, for the kretprobe-triage lab (issue 12). Loaded only inside the lab's
 * QEMU guest, never on the host.
 *
 * - krtfix_target() is a noinline test function whose body blocks legally on a gate (a wait
 *   queue) until user space writes to debugfs `release`. Each write to debugfs `call` is one call:
 *   "OP [DEPTH [TAG]]". With DEPTH > 1 the function calls itself DEPTH-1 times through a volatile
 *   function pointer (the compiler cannot turn that into a loop or a tail call) before blocking.
 * - A kretprobe on krtfix_target, registered with register_kretprobe(): module parameters
 *   maxactive (0 = the kernel's default), filter_tag (the entry handler rejects calls whose tag
 *   matches), reenter (the entry handler calls krtfix_helper(), which calls the probed target
 *   through its non-blocking path: the embedded kprobe is hit while its own handler runs, so
 *   rp.kp.nmissed rises while the pool is fine: the article's "do not confuse" case).
 * - data_size holds a per-instance record: instance id, entry time, op id, depth. The parameters
 *   symbol and data_size (a larger area) exist for the registration-failure scenarios.
 * - debugfs krtfix/: counters (nmissed, kp_nmissed, maxactive, entries, returns, filtered, held,
 *   calls) and records: a bounded ring of probe.jsonl lines (ledger-format.md).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/ktime.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/atomic.h>
#include <linux/smp.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kretprobe-triage lab fixture: a gated test function under a kretprobe");

static int maxactive;
module_param(maxactive, int, 0444);
MODULE_PARM_DESC(maxactive, "kretprobe maxactive (0 = the kernel's default)");
static char *filter_tag = "";
module_param(filter_tag, charp, 0444);
MODULE_PARM_DESC(filter_tag, "the entry handler rejects calls carrying this tag");
static bool reenter;
module_param(reenter, bool, 0444);
MODULE_PARM_DESC(reenter, "the entry handler calls a helper that reaches the probed target");
static char *epoch = "reg-1";
module_param(epoch, charp, 0444);
MODULE_PARM_DESC(epoch, "label of this registration, written in counter records");
/* The lab's registration-failure scenarios: another symbol, a larger per-instance data area. */
static char *symbol = "krtfix_target";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "the symbol the kretprobe is registered on (default krtfix_target)");
static int data_size;
module_param(data_size, int, 0444);
MODULE_PARM_DESC(data_size, "kretprobe data_size when larger than the module's own record (0 = its record)");

#define OP_LEN 32
#define TAG_LEN 16
#define RING 512
#define LINE_LEN 192

struct krtfix_call {
	char op[OP_LEN];
	char tag[TAG_LEN];
	int depth;
};

struct krtfix_inst {
	u64 seq;
	u64 entry_ns;
	char op[OP_LEN];
	int depth;
};

static DECLARE_WAIT_QUEUE_HEAD(gate_wq);
static atomic_t gate_gen = ATOMIC_INIT(0);
static atomic_t held = ATOMIC_INIT(0);
static atomic_t calls = ATOMIC_INIT(0);
static atomic_t entries = ATOMIC_INIT(0);
static atomic_t returns = ATOMIC_INIT(0);
static atomic_t filtered = ATOMIC_INIT(0);
static atomic_t reentered = ATOMIC_INIT(0);
static atomic64_t inst_seq = ATOMIC64_INIT(0);

static DEFINE_SPINLOCK(ring_lock);
static char (*ring)[LINE_LEN];
static unsigned int ring_head, ring_len, ring_dropped;

static void ring_put(const char *fmt, ...)
{
	unsigned long flags;
	va_list ap;
	char *slot;

	spin_lock_irqsave(&ring_lock, flags);
	if (ring_len == RING) {
		ring_dropped++;
		spin_unlock_irqrestore(&ring_lock, flags);
		return;
	}
	slot = ring[(ring_head + ring_len) % RING];
	ring_len++;
	va_start(ap, fmt);
	vsnprintf(slot, LINE_LEN, fmt, ap);
	va_end(ap);
	spin_unlock_irqrestore(&ring_lock, flags);
}

int krtfix_target(struct krtfix_call *c, int depth);
static int (*volatile krtfix_self)(struct krtfix_call *, int) = krtfix_target;

/* The disposable test function. Blocks at the gate in its own body, in process context. */
noinline int krtfix_target(struct krtfix_call *c, int depth)
{
	int gen, ret;

	if (!c)
		return -EAGAIN; /* the helper's non-blocking path: never waits */
	if (depth > 1) {
		ret = krtfix_self(c, depth - 1);
		barrier();
		return ret < 0 ? ret : depth;
	}
	gen = atomic_read(&gate_gen);
	atomic_inc(&held);
	ret = wait_event_interruptible(gate_wq, atomic_read(&gate_gen) != gen);
	atomic_dec(&held);
	return ret ? ret : depth;
}

/* The second helper: called from the entry handler in `reenter` mode; reaches the target. */
static noinline int krtfix_helper(void)
{
	int ret = krtfix_self(NULL, 0);

	barrier();
	atomic_inc(&reentered);
	return ret;
}

static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct krtfix_call *c = (struct krtfix_call *)regs_get_kernel_argument(regs, 0);
	int depth = (int)regs_get_kernel_argument(regs, 1);
	struct krtfix_inst *d = (struct krtfix_inst *)ri->data;
	u64 now = ktime_get_ns();

	if (!c)
		return 1;
	atomic_inc(&entries);
	if (filter_tag[0] && strncmp(c->tag, filter_tag, TAG_LEN) == 0) {
		atomic_inc(&filtered);
		ring_put("{\"ev\": \"filtered\", \"task\": %d, \"cpu\": %d, \"ts_ns\": %llu, \"op\": \"%s\", \"depth\": %d}",
			 current->pid, raw_smp_processor_id(), now, c->op, depth);
		return 1;
	}
	d->seq = atomic64_inc_return(&inst_seq);
	d->entry_ns = now;
	d->depth = depth;
	strscpy(d->op, c->op, OP_LEN);
	ring_put("{\"ev\": \"entry\", \"inst\": \"%s:%llu\", \"task\": %d, \"cpu\": %d, \"ts_ns\": %llu, \"op\": \"%s\", \"depth\": %d}",
		 epoch, d->seq, current->pid, raw_smp_processor_id(), now, d->op, depth);
	if (reenter)
		krtfix_helper();
	return 0;
}

static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct krtfix_inst *d = (struct krtfix_inst *)ri->data;

	atomic_inc(&returns);
	ring_put("{\"ev\": \"return\", \"inst\": \"%s:%llu\", \"task\": %d, \"cpu\": %d, \"ts_ns\": %llu, \"op\": \"%s\", \"depth\": %d, \"ret\": %ld, \"entry_ns\": %llu}",
		 epoch, d->seq, current->pid, raw_smp_processor_id(), ktime_get_ns(), d->op, d->depth,
		 (long)regs_return_value(regs), d->entry_ns);
	return 0;
}

static struct kretprobe rp = {
	.kp.symbol_name = "krtfix_target",
	.handler = ret_handler,
	.entry_handler = entry_handler,
	.data_size = sizeof(struct krtfix_inst),
};

static struct dentry *dir;

/* "OP [DEPTH [TAG]]": one call of the target per write; the write returns when the call does. */
static ssize_t call_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	struct krtfix_call c = { .depth = 1 };
	char buf[96];
	int n, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	n = sscanf(buf, "%31s %d %15s", c.op, &c.depth, c.tag);
	if (n < 1 || c.depth < 1 || c.depth > 16)
		return -EINVAL;
	atomic_inc(&calls);
	ret = krtfix_target(&c, c.depth);
	return ret < 0 ? ret : len;
}

static ssize_t release_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	atomic_inc(&gate_gen);
	wake_up_all(&gate_wq);
	return len;
}

static int counters_show(struct seq_file *m, void *v)
{
	seq_printf(m, "epoch %s\n", epoch);
	seq_printf(m, "nmissed %d\n", rp.nmissed);
	seq_printf(m, "kp_nmissed %lu\n", rp.kp.nmissed);
	seq_printf(m, "maxactive %d\n", rp.maxactive);
	seq_printf(m, "maxactive_param %d\n", maxactive);
	seq_printf(m, "calls %d\n", atomic_read(&calls));
	seq_printf(m, "entries %d\n", atomic_read(&entries));
	seq_printf(m, "returns %d\n", atomic_read(&returns));
	seq_printf(m, "filtered %d\n", atomic_read(&filtered));
	seq_printf(m, "reentered %d\n", atomic_read(&reentered));
	seq_printf(m, "held %d\n", atomic_read(&held));
	seq_printf(m, "records_dropped %u\n", ring_dropped);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(counters);

static int records_show(struct seq_file *m, void *v)
{
	unsigned int i, len;
	char *line;
	u64 now;

	line = kmalloc(LINE_LEN, GFP_KERNEL);
	if (!line)
		return -ENOMEM;
	spin_lock_irq(&ring_lock);
	len = ring_len;
	spin_unlock_irq(&ring_lock);
	for (i = 0; i < len; i++) {
		spin_lock_irq(&ring_lock);
		memcpy(line, ring[(ring_head + i) % RING], LINE_LEN);
		spin_unlock_irq(&ring_lock);
		seq_printf(m, "%s\n", line);
	}
	kfree(line);
	/* Counter snapshots at the time of reading, in the same format (ledger-format.md). */
	now = ktime_get_ns();
	seq_printf(m, "{\"ev\": \"counter\", \"name\": \"nmissed\", \"value\": %d, \"epoch\": \"%s\", \"ts_ns\": %llu}\n",
		   rp.nmissed, epoch, now);
	seq_printf(m, "{\"ev\": \"counter\", \"name\": \"kprobe_nmissed\", \"value\": %lu, \"epoch\": \"%s\", \"ts_ns\": %llu}\n",
		   rp.kp.nmissed, epoch, now);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(records);

static const struct file_operations call_fops = { .owner = THIS_MODULE, .write = call_write };
static const struct file_operations release_fops = { .owner = THIS_MODULE, .write = release_write };

static int __init krtfix_init(void)
{
	int ret;

	ring = kcalloc(RING, LINE_LEN, GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	rp.maxactive = maxactive;
	rp.kp.symbol_name = symbol;
	if (data_size > (int)sizeof(struct krtfix_inst))
		rp.data_size = data_size;
	ret = register_kretprobe(&rp);
	if (ret < 0) {
		/* The wording of samples/kprobes/kretprobe_example.c, which log readers know. */
		pr_err("krtfix: register_kretprobe failed, returned %d\n", ret);
		kfree(ring);
		return ret;
	}
	dir = debugfs_create_dir("krtfix", NULL);
	debugfs_create_file("call", 0200, dir, NULL, &call_fops);
	debugfs_create_file("release", 0200, dir, NULL, &release_fops);
	debugfs_create_file("counters", 0444, dir, NULL, &counters_fops);
	debugfs_create_file("records", 0444, dir, NULL, &records_fops);
	pr_info("krtfix: kretprobe on %s at %px, maxactive %d\n", rp.kp.symbol_name, rp.kp.addr, rp.maxactive);
	return 0;
}

static void __exit krtfix_exit(void)
{
	debugfs_remove_recursive(dir);
	atomic_inc(&gate_gen);
	wake_up_all(&gate_wq);
	unregister_kretprobe(&rp);
	kfree(ring);
}

module_init(krtfix_init);
module_exit(krtfix_exit);
