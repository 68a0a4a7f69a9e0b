// The io_uring ring (see uring.h): setup with the best task-run mode the
// kernel has, the shared memory, submission, teardown, and the availability
// probe. Built only on Linux; without <linux/io_uring.h> at build time the
// ring never opens and the probe says why.
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "check.h"

#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#define BOBBIN_HAVE_IO_URING 1
#endif

namespace bobbin {

namespace {

size_t PageRound(size_t n) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

}  // namespace

Mapping* Mapping::Anonymous(size_t bytes) {
  size_t mapped = PageRound(bytes == 0 ? 1 : bytes);
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  Mapping* m = new Mapping();
  m->base = static_cast<uint8_t*>(p);
  m->bytes = bytes;
  m->mapped = mapped;
  return m;
}

Mapping* Mapping::OfRing(int ring_fd, size_t bytes, uint64_t offset) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) return nullptr;
  Mapping* m = new Mapping();
  m->base = static_cast<uint8_t*>(p);
  m->bytes = bytes;
  m->mapped = bytes;
  return m;
}

void Mapping::Release() {
  int held = refs.fetch_sub(1, std::memory_order_acq_rel);
  BOBBIN_CHECK(held >= 1);
  if (held != 1) return;
  munmap(base, mapped);
  delete this;
}

Ring::~Ring() { Close(); }

#if defined(BOBBIN_HAVE_IO_URING)

namespace {

// Marks the CQE of the cancellation Close() submits.
constexpr uint64_t kCancelAllData = ~0ull;

int SysSetup(uint32_t entries, struct io_uring_params* p) { return static_cast<int>(syscall(__NR_io_uring_setup, entries, p)); }

int SysEnter(int fd, uint32_t submit, uint32_t wait, uint32_t flags, const void* arg, size_t argsz) {
  return static_cast<int>(syscall(__NR_io_uring_enter, fd, submit, wait, flags, arg, argsz));
}

int SysRegister(int fd, uint32_t op, const void* arg, uint32_t n) {
  return static_cast<int>(syscall(__NR_io_uring_register, fd, op, arg, n));
}

uint32_t TaskRunFlags(TaskRun mode) {
  switch (mode) {
    case TaskRun::kDefer: return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    case TaskRun::kCoop: return IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    default: return 0;
  }
}

bool PowerOfTwo(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

int Ring::Open(const UringConfig& config, std::string* step) {
  if (fd_ >= 0) return -EBUSY;
  config_ = config;
  if (!PowerOfTwo(config.buffers) || config.buffers > 32768 || config.buffer_size == 0 || config.staging == 0 ||
      config.staging_size == 0 || config.entries == 0) {
    *step = "configuration";
    return -EINVAL;
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    *step = "eventfd";
    return -errno;
  }
  int rc;
  if (config.task_run == TaskRun::kAuto) {
    rc = Setup(TaskRunFlags(TaskRun::kDefer));
    if (rc == -EINVAL) rc = Setup(TaskRunFlags(TaskRun::kCoop));
  } else {
    rc = Setup(TaskRunFlags(config.task_run));
  }
  if (rc < 0) {
    *step = "io_uring_setup";
    Close();
    return rc;
  }
  if ((rc = MapRings()) < 0) {
    *step = "mmap of the rings";
    Close();
    return rc;
  }
  if (SysRegister(fd_, IORING_REGISTER_EVENTFD, &wake_fd_, 1) < 0) {
    rc = -errno;
    *step = "IORING_REGISTER_EVENTFD";
    Close();
    return rc;
  }
  if ((rc = RegisterBuffers()) < 0) {
    *step = "IORING_REGISTER_PBUF_RING";
    Close();
    return rc;
  }
  RegisterRingFd();
  staging_ = Mapping::Anonymous(static_cast<size_t>(config.staging) * config.staging_size);
  if (staging_ == nullptr) {
    rc = -errno;
    *step = "mmap of the staging area";
    Close();
    return rc;
  }
  return 0;
}

int Ring::Setup(uint32_t flags) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = flags | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE;
  p.cq_entries = config_.entries * 4;
  int fd = SysSetup(config_.entries, &p);
  if (fd < 0) return -errno;
  if ((p.features & IORING_FEAT_SINGLE_MMAP) == 0) {
    close(fd);
    return -ENOSYS;  // before Linux 5.4: far older than multishot recv anyway
  }
  fd_ = fd;
  enter_fd_ = fd;
  setup_flags_ = p.flags;
  layout_ = UringLayout{p.sq_off.head,       p.sq_off.tail,         p.sq_off.ring_mask, p.sq_off.ring_entries,
                        p.sq_off.flags,      p.cq_off.head,         p.cq_off.tail,      p.cq_off.ring_mask,
                        p.cq_off.ring_entries, p.cq_off.cqes,       p.cq_off.flags};
  // The SQ array's offset and the CQ ring's size decide the mapping's size.
  size_t sq_bytes = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
  size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  config_.entries = p.sq_entries;
  sq_array_offset_ = p.sq_off.array;
  rings_bytes_ = sq_bytes > cq_bytes ? sq_bytes : cq_bytes;
  return 0;
}

int Ring::MapRings() {
  rings_ = Mapping::OfRing(fd_, rings_bytes_, IORING_OFF_SQ_RING);
  if (rings_ == nullptr) return -errno;
  sqes_ = Mapping::OfRing(fd_, config_.entries * sizeof(struct io_uring_sqe), IORING_OFF_SQES);
  if (sqes_ == nullptr) return -errno;
  uint32_t* array = reinterpret_cast<uint32_t*>(rings_->base + sq_array_offset_);
  for (uint32_t i = 0; i < config_.entries; i++) array[i] = i;
  return 0;
}

int Ring::RegisterBuffers() {
  const uint32_t n = config_.buffers;
  buffer_ring_ = Mapping::Anonymous(n * sizeof(struct io_uring_buf));
  buffers_ = Mapping::Anonymous(static_cast<size_t>(n) * config_.buffer_size);
  if (buffer_ring_ == nullptr || buffers_ == nullptr) return -errno;
  struct io_uring_buf_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.ring_addr = reinterpret_cast<uint64_t>(buffer_ring_->base);
  reg.ring_entries = n;
  reg.bgid = kBufferGroup;
  if (SysRegister(fd_, IORING_REGISTER_PBUF_RING, &reg, 1) < 0) return -errno;
  // Every buffer starts in the ring; JavaScript continues from this tail.
  // (Not through struct io_uring_buf_ring: in C++ its flexible array member
  // sits 8 bytes further than in C, where the kernel has it.)
  auto* bufs = reinterpret_cast<struct io_uring_buf*>(buffer_ring_->base);
  for (uint32_t bid = 0; bid < n; bid++) {
    bufs[bid].addr = reinterpret_cast<uint64_t>(buffers_->base + static_cast<size_t>(bid) * config_.buffer_size);
    bufs[bid].len = config_.buffer_size;
    bufs[bid].bid = static_cast<uint16_t>(bid);
  }
  // The tail overlays the first entry's `resv`.
  static_assert(offsetof(struct io_uring_buf, resv) == kBufferRingTail, "the buffer ring's tail");
  __atomic_store_n(reinterpret_cast<uint16_t*>(buffer_ring_->base + kBufferRingTail), static_cast<uint16_t>(n), __ATOMIC_RELEASE);
  return 0;
}

void Ring::RegisterRingFd() {
  // Entering by the registered index spares the kernel a file lookup per
  // entry (Linux 5.18). Optional: without it, entries use the fd.
  struct io_uring_rsrc_update update;
  memset(&update, 0, sizeof update);
  update.offset = static_cast<uint32_t>(-1);  // any free slot
  update.data = static_cast<uint64_t>(fd_);
  if (SysRegister(fd_, IORING_REGISTER_RING_FDS, &update, 1) == 1) {
    enter_fd_ = static_cast<int>(update.offset);
    enter_flags_ = IORING_ENTER_REGISTERED_RING;
  }
}

uint32_t Ring::Load(uint32_t offset) const {
  return __atomic_load_n(reinterpret_cast<const uint32_t*>(rings_->base + offset), __ATOMIC_ACQUIRE);
}

int Ring::Submit(uint32_t tail) {
  if (fd_ < 0) return -EBADF;
  BOBBIN_CHECK(rings_ != nullptr && sqes_ != nullptr);
  // JavaScript's tail (shared memory): never more SQEs than the ring holds
  // past the kernel's head, or the kernel would take entries written over.
  if (tail - Load(layout_.sq_head) > config_.entries) return -EINVAL;
  uint32_t* sq_tail = reinterpret_cast<uint32_t*>(rings_->base + layout_.sq_tail);
  __atomic_store_n(sq_tail, tail, __ATOMIC_RELEASE);
  for (;;) {
    uint32_t submit = tail - Load(layout_.sq_head);
    int rc = SysEnter(enter_fd_, submit, 0, IORING_ENTER_GETEVENTS | enter_flags_, nullptr, 0);
    if (rc >= 0) return rc;
    if (errno != EINTR) return -errno;
  }
}

bool Ring::CompletionsWaiting() const { return fd_ >= 0 && Load(layout_.cq_head) != Load(layout_.cq_tail); }

bool Ring::CompletionsPending() const {
  if (CompletionsWaiting()) return true;
  return fd_ >= 0 && (Load(layout_.sq_flags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)) != 0;
}

bool Ring::EntryNeeded(uint32_t tail) const {
  if (fd_ < 0) return false;
  return tail != Load(layout_.sq_tail) || (Load(layout_.sq_flags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)) != 0;
}

void Ring::SetNotifications(bool on) {
  if (fd_ < 0) return;
  uint32_t* flags = reinterpret_cast<uint32_t*>(rings_->base + layout_.cq_flags);
  if (on) __atomic_and_fetch(flags, ~IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
  else __atomic_or_fetch(flags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
}

int Ring::ResetWakeup() {
  BOBBIN_CHECK(wake_fd_ >= 0);
  uint64_t value;
  // EAGAIN: nothing was signalled, or another reset came first.
  if (read(wake_fd_, &value, sizeof value) < 0 && errno != EAGAIN) return -errno;
  return 0;
}

int Ring::Wake() {
  BOBBIN_CHECK(wake_fd_ >= 0);
  uint64_t one = 1;
  // EAGAIN: the counter is huge, a wake-up is pending anyway.
  if (write(wake_fd_, &one, sizeof one) < 0 && errno != EAGAIN) return -errno;
  return 0;
}

void Ring::CancelEverything() {
  BOBBIN_CHECK(fd_ >= 0 && rings_ != nullptr && sqes_ != nullptr);
  // One ASYNC_CANCEL matching any request, at the kernel's own tail (SQEs
  // JavaScript wrote and never submitted are dropped), then wait for its CQE:
  // the requests it cancelled have completed by then. Bounded: one second.
  uint32_t tail = Load(layout_.sq_tail);
  uint32_t mask = Load(layout_.sq_mask);
  auto* sqe = reinterpret_cast<struct io_uring_sqe*>(sqes_->base) + (tail & mask);
  memset(sqe, 0, sizeof *sqe);
  sqe->opcode = IORING_OP_ASYNC_CANCEL;
  sqe->fd = -1;
  sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
  sqe->user_data = kCancelAllData;
  __atomic_store_n(reinterpret_cast<uint32_t*>(rings_->base + layout_.sq_tail), tail + 1, __ATOMIC_RELEASE);
  struct __kernel_timespec ts = {0, 100 * 1000 * 1000};
  struct io_uring_getevents_arg arg;
  memset(&arg, 0, sizeof arg);
  arg.ts = reinterpret_cast<uint64_t>(&ts);
  uint32_t* cq_head = reinterpret_cast<uint32_t*>(rings_->base + layout_.cq_head);
  const auto* cqes = reinterpret_cast<const struct io_uring_cqe*>(rings_->base + layout_.cqes);
  uint32_t cq_mask = Load(layout_.cq_mask);
  for (int attempt = 0; attempt < 10; attempt++) {
    uint32_t submit = tail + 1 - Load(layout_.sq_head);
    int rc = SysEnter(fd_, submit, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof arg);
    if (rc < 0 && errno != EINTR && errno != ETIME) return;  // e.g. EEXIST: another thread; closing will cancel
    uint32_t head = *cq_head;
    uint32_t end = Load(layout_.cq_tail);
    bool done = false;
    for (; head != end; head++) {
      if (cqes[head & cq_mask].user_data == kCancelAllData) done = true;
    }
    __atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
    if (done) return;
  }
}

void Ring::Close() {
  if (fd_ >= 0) {
    if (rings_ != nullptr && sqes_ != nullptr) CancelEverything();
    close(fd_);  // unregisters the eventfd and the buffer ring with it
    fd_ = -1;
  }
  if (wake_fd_ >= 0) {
    close(wake_fd_);
    wake_fd_ = -1;
  }
  for (Mapping** m : {&rings_, &sqes_, &buffer_ring_, &buffers_, &staging_}) {
    if (*m != nullptr) {
      (*m)->Release();
      *m = nullptr;
    }
  }
}

// ---- the probe ------------------------------------------------------------

namespace {

std::string KernelRelease() {
  struct utsname u;
  return uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

std::string ErrnoText(int err) { return std::string(strerror(err)); }

// Why io_uring_setup said EPERM.
std::string PermissionReason() {
  int disabled = -1;
  if (FILE* f = fopen("/proc/sys/kernel/io_uring_disabled", "r")) {
    if (fscanf(f, "%d", &disabled) != 1) disabled = -1;
    fclose(f);
  }
  if (disabled == 2) return "io_uring is disabled on this machine (sysctl kernel.io_uring_disabled = 2)";
  if (disabled == 1) {
    return "io_uring is restricted to the members of kernel.io_uring_group (sysctl kernel.io_uring_disabled = 1)";
  }
  return "io_uring_setup was refused (EPERM): a seccomp filter or a security policy forbids io_uring here "
         "(container runtimes often do)";
}

// Runs one request on the probe's ring and returns its first CQE (res, flags), or false.
class ProbeRing {
 public:
  explicit ProbeRing(Ring* ring) : r_(ring) {}

  struct io_uring_sqe* Next() {
    uint32_t mask = *reinterpret_cast<uint32_t*>(r_->rings()->base + r_->layout().sq_mask);
    auto* sqe = reinterpret_cast<struct io_uring_sqe*>(r_->sqes()->base) + (tail_ & mask);
    memset(sqe, 0, sizeof *sqe);
    tail_++;
    return sqe;
  }

  bool Run(uint64_t data, int32_t* res, uint32_t* flags) {
    if (r_->Submit(tail_) < 0) return false;
    const UringLayout& l = r_->layout();
    uint8_t* base = r_->rings()->base;
    uint32_t* head = reinterpret_cast<uint32_t*>(base + l.cq_head);
    uint32_t mask = *reinterpret_cast<uint32_t*>(base + l.cq_mask);
    const auto* cqes = reinterpret_cast<const struct io_uring_cqe*>(base + l.cqes);
    bool found = false;
    for (uint32_t end = __atomic_load_n(reinterpret_cast<uint32_t*>(base + l.cq_tail), __ATOMIC_ACQUIRE); *head != end;
         (*head)++) {
      const struct io_uring_cqe* c = &cqes[*head & mask];
      if (c->user_data == data && !found) {
        *res = c->res;
        *flags = c->flags;
        found = true;
      }
    }
    return found;
  }

 private:
  Ring* r_;
  uint32_t tail_ = 0;
};

// Multishot recv into a provided buffer (Linux 6.0): one byte arrives, the
// request stays armed (IORING_CQE_F_MORE).
std::string ProbeRecv(ProbeRing* probe) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) return "socketpair: " + ErrnoText(errno);
  struct io_uring_sqe* sqe = probe->Next();
  sqe->opcode = IORING_OP_RECV;
  sqe->fd = sv[0];
  sqe->ioprio = IORING_RECV_MULTISHOT;
  sqe->flags = IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufferGroup;
  sqe->user_data = 1;
  std::string why;
  int32_t res = 0;
  uint32_t flags = 0;
  if (write(sv[1], "x", 1) != 1) {
    why = "socketpair write: " + ErrnoText(errno);
  } else if (!probe->Run(1, &res, &flags)) {
    why = "a multishot recv never completed";
  } else if (res == -EINVAL) {
    why = "the kernel has no multishot recv (it needs Linux 6.0)";
  } else if (res != 1 || (flags & IORING_CQE_F_MORE) == 0 || (flags & IORING_CQE_F_BUFFER) == 0) {
    why = "a multishot recv into a provided buffer did not work (res " + std::to_string(res) + ")";
  }
  close(sv[0]);
  close(sv[1]);
  return why;
}

// Multishot accept (Linux 5.19) on an autobound abstract Unix socket.
std::string ProbeAccept(ProbeRing* probe) {
  int server = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (server < 0) return "socket: " + ErrnoText(errno);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  socklen_t len = sizeof(sa_family_t);  // autobind: the kernel picks an abstract name
  std::string why;
  int client = -1;
  if (bind(server, reinterpret_cast<struct sockaddr*>(&addr), len) < 0 || listen(server, 4) < 0) {
    why = "listen: " + ErrnoText(errno);
  } else {
    struct io_uring_sqe* sqe = probe->Next();
    sqe->opcode = IORING_OP_ACCEPT;
    sqe->fd = server;
    sqe->ioprio = IORING_ACCEPT_MULTISHOT;
    sqe->accept_flags = SOCK_NONBLOCK | SOCK_CLOEXEC;
    sqe->user_data = 2;
    len = sizeof addr;
    client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int32_t res = 0;
    uint32_t flags = 0;
    if (getsockname(server, reinterpret_cast<struct sockaddr*>(&addr), &len) < 0 || client < 0 ||
        connect(client, reinterpret_cast<struct sockaddr*>(&addr), len) < 0) {
      why = "connect: " + ErrnoText(errno);
    } else if (!probe->Run(2, &res, &flags)) {
      why = "a multishot accept never completed";
    } else if (res < 0) {
      why = res == -EINVAL ? "the kernel has no multishot accept (it needs Linux 5.19)" : "multishot accept: " + ErrnoText(-res);
    } else {
      close(res);
      if ((flags & IORING_CQE_F_MORE) == 0) why = "a multishot accept did not stay armed";
    }
  }
  if (client >= 0) close(client);
  close(server);
  return why;
}

std::string Probe(uint32_t* flags) {
  UringConfig config;
  config.entries = 8;
  config.buffers = 8;
  config.buffer_size = 64;
  config.staging = 1;
  config.staging_size = 64;
  Ring ring;
  std::string step;
  int rc = ring.Open(config, &step);
  if (rc < 0) {
    std::string kernel = " (kernel " + KernelRelease() + ")";
    if (step == "io_uring_setup" && rc == -ENOSYS) return "the kernel has no io_uring (io_uring_setup: ENOSYS)" + kernel;
    if (step == "io_uring_setup" && rc == -EPERM) return PermissionReason();
    if (step == "io_uring_setup" && rc == -EINVAL) return "the kernel's io_uring is too old for the flags the backend needs" + kernel;
    if (step == "IORING_REGISTER_PBUF_RING" && rc == -EINVAL) {
      return "the kernel has no provided-buffer rings (they need Linux 5.19)" + kernel;
    }
    return step + ": " + ErrnoText(-rc) + kernel;
  }
  *flags = ring.setup_flags();
  ProbeRing probe(&ring);
  std::string why = ProbeRecv(&probe);
  if (why.empty()) why = ProbeAccept(&probe);
  if (!why.empty()) why += " (kernel " + KernelRelease() + ")";
  return why;
}

}  // namespace

std::string UringProbe(uint32_t* flags) {
  static std::once_flag once;
  static std::string reason;
  static uint32_t probed_flags = 0;
  std::call_once(once, [] { reason = Probe(&probed_flags); });
  *flags = probed_flags;
  return reason;
}

#else  // no <linux/io_uring.h> at build time

int Ring::Open(const UringConfig&, std::string* step) {
  *step = "build";
  return -ENOSYS;
}
void Ring::Close() {}
int Ring::Submit(uint32_t) { return -ENOSYS; }
bool Ring::CompletionsWaiting() const { return false; }
bool Ring::CompletionsPending() const { return false; }
bool Ring::EntryNeeded(uint32_t) const { return false; }
void Ring::SetNotifications(bool) {}
int Ring::ResetWakeup() { return -ENOSYS; }
int Ring::Wake() { return -ENOSYS; }

std::string UringProbe(uint32_t* flags) {
  *flags = 0;
  return "the addon was built without <linux/io_uring.h> (install the kernel headers, e.g. Debian's linux-libc-dev, and rebuild)";
}

#endif

}  // namespace bobbin
