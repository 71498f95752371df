/* glibc's _dl_find_object (2.35) for musl, which lacks it: Debian's libgcc_eh.a for
 * mipsel finds the unwind tables (FDEs) of an address only through it. Without it nothing
 * can unwind or take a backtrace, and libgcc aborts when it cannot find its own frame:
 * anyhow captures a backtrace for each error when RUST_BACKTRACE is set.
 * scripts/musl-cc compiles it with musl's headers and links it beside -lgcc_eh.
 *
 * It walks the loaded objects with dl_iterate_phdr (musl has it, static builds included)
 * for the one whose PT_LOAD segments hold the address, and returns its PT_GNU_EH_FRAME
 * (.eh_frame_hdr), which libgcc searches. The layout is glibc's for targets without
 * dlfo_eh_dbase and dlfo_eh_count (MIPS among them).
 *
 * It also links in the pthread functions libgcc_eh calls through weak references: built
 * for a glibc that has them in libc, it calls them unconditionally (pthread_once first,
 * on the first unwind), and in a static link nothing else pulls them out of musl's
 * libc.a, so the call would jump to address 0. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct dl_find_object {
  unsigned long long dlfo_flags;
  void *dlfo_map_start;
  void *dlfo_map_end;
  struct link_map *dlfo_link_map;
  void *dlfo_eh_frame;
  unsigned long long __dlfo_reserved[7];
};

struct search {
  uintptr_t pc;
  struct dl_find_object *result;
};

static int holds(struct dl_phdr_info *info, size_t size, void *data) {
  struct search *s = data;
  uintptr_t start = UINTPTR_MAX, end = 0;
  void *eh_frame = NULL;
  int found = 0;
  (void)size;
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t from = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD) {
      if (s->pc >= from && s->pc < from + p->p_memsz) found = 1;
      if (from < start) start = from;
      if (from + p->p_memsz > end) end = from + p->p_memsz;
    } else if (p->p_type == PT_GNU_EH_FRAME) {
      eh_frame = (void *)from;
    }
  }
  if (!found) return 0;
  s->result->dlfo_flags = 0;
  s->result->dlfo_map_start = (void *)start;
  s->result->dlfo_map_end = (void *)end;
  s->result->dlfo_link_map = NULL;
  s->result->dlfo_eh_frame = eh_frame;
  return 1;
}

int _dl_find_object(void *pc, struct dl_find_object *result) {
  struct search s = {(uintptr_t)pc, result};
  return dl_iterate_phdr(holds, &s) ? 0 : -1;
}

/* Referenced here, so linked (see the top). */
void *const cryptobench_libgcc_eh_needs[] = {
    (void *)pthread_once,        (void *)pthread_mutex_lock,  (void *)pthread_mutex_unlock,
    (void *)pthread_key_create,  (void *)pthread_getspecific, (void *)pthread_setspecific,
};
