// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Pin naming, pin directories, ownership and orphans: see pins.h for the layout. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "env.h"
#include "pins.h"
#include "rl_skel.h"

static bool valid_ifname(const char *name)
{
	/* As the kernel's dev_valid_name(), for what matters to a path. */
	return *name && strlen(name) < IF_NAMESIZE && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..");
}

int rl_pin_encode(const char *name, char *out, size_t len)
{
	size_t n = 0;

	if (!valid_ifname(name))
		return -EINVAL;
	for (const char *p = name; *p; p++) {
		/* '%' is escaped too, so that the encoding can be read back. */
		if (*p == '.' || *p == '%')
			n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%%%02x",
					      (unsigned char)*p);
		else if (n + 1 < len)
			out[n++] = *p;
		else
			n++;
	}
	if (n >= len)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

int rl_pin_decode(const char *enc, char *name, size_t len)
{
	size_t n = 0;

	for (const char *p = enc; *p; p++) {
		char c = *p;

		if (c == '.')
			return -EINVAL;
		if (c == '%') {
			if (!strncmp(p, "%2e", 3))
				c = '.';
			else if (!strncmp(p, "%25", 3))
				c = '%';
			else
				return -EINVAL;
			p += 2;
		}
		if (n + 1 >= len)
			return -EINVAL;
		name[n++] = c;
	}
	if (!len)
		return -EINVAL;
	name[n] = '\0';
	return valid_ifname(name) ? 0 : -EINVAL;
}

int rl_pin_dir(const char *root, __u64 netns_ino, const char *name, char *out, size_t len)
{
	char enc[RL_PINNAME_MAX];
	int ret = rl_pin_encode(name, enc, sizeof(enc));

	if (ret)
		return ret;
	if ((size_t)snprintf(out, len, "%s/netns-%llu/%s", root, (unsigned long long)netns_ino,
			     enc) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int iface_paths(const char *name, struct rl_iface *ifc, char *err, size_t errlen)
{
	memset(ifc, 0, sizeof(*ifc));
	if (rl_pin_encode(name, ifc->pinname, sizeof(ifc->pinname))) {
		snprintf(err, errlen, "'%s' is not a valid interface name", name);
		return -EINVAL;
	}
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ifc->netns_ino = rl_netns_ino();
	if (!ifc->netns_ino) {
		snprintf(err, errlen,
			 "couldn't identify this network namespace (/proc/self/ns/net)");
		return -ENOENT;
	}
	return rl_pin_dir(RL_PIN_ROOT, ifc->netns_ino, name, ifc->pindir, sizeof(ifc->pindir));
}

int rl_iface_get(const char *name, struct rl_iface *ifc, char *err, size_t errlen)
{
	int ret = iface_paths(name, ifc, err, errlen);

	if (ret)
		return ret;
	ifc->ifindex = (int)if_nametoindex(name);
	if (!ifc->ifindex) {
		snprintf(err, errlen, "no such interface '%s'", name);
		return -ENODEV;
	}
	return 0;
}

bool rl_is_attached(const struct rl_iface *ifc)
{
	struct stat st;

	return stat(ifc->pindir, &st) == 0;
}

/* Is the map with this id used by any loaded program? */
static bool map_in_use(__u32 map_id)
{
	__u32 id = 0, ids[32];

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { .nr_map_ids = 32,
					      .map_ids = (__u64)(unsigned long)ids };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		/*
		 * Only an XDP program runs the limiter: the sweep's timer keeps a
		 * syscall program (and the sync agent one) on the maps after
		 * the XDP program went with its interface or namespace.
		 */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_PROG_TYPE_XDP)
			for (__u32 i = 0; i < info.nr_map_ids && i < 32; i++)
				if (ids[i] == map_id) {
					close(fd);
					return true;
				}
		close(fd);
	}
	return false;
}

static __u32 pinned_map_id(const char *dir, const char *map)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), id = 0;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, map);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		id = info.id;
	close(fd);
	return id;
}

/* Does any loaded program use one of the maps pinned in @dir? */
static bool dir_in_use(const char *dir)
{
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		__u32 id = pinned_map_id(dir, rl_map_names[i]);

		if (id && map_in_use(id))
			return true;
	}
	return false;
}

int rl_map_lookup_sized(int fd, const void *key, void *value, __u32 size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != size)
		return -EPROTO;
	return bpf_map_lookup_elem(fd, key, value) ? -errno : 0;
}

static int read_ctl(const char *dir, struct rl_ctl *ctl)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/rl_ctl", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	ret = rl_map_lookup_sized(fd, &zero, ctl, sizeof(*ctl));
	close(fd);
	return ret;
}

__u32 rl_pins_id(const char *pindir)
{
	return pinned_map_id(pindir, "rl_counters");
}

/*
 * Pins of a shared limiter (see pins.h): ours if @ifc runs the limiter, or if
 * every interface that runs it has pins of it under its own name. A renamed
 * member has none under its new name: then the pins may be its, not ours.
 */
static bool share_owned(const struct rl_iface *ifc)
{
	struct rl_member m[RL_MAX_MEMBERS];
	char dir[PATH_MAX];
	__u32 id = rl_pins_id(ifc->pindir);
	int n = rl_members_of(id, m, RL_MAX_MEMBERS);

	if (n <= 0)
		return false;
	for (int i = 0; i < n; i++)
		if (m[i].ifindex == ifc->ifindex)
			return true;
	for (int i = 0; i < n; i++)
		if (rl_pin_dir(RL_PIN_ROOT, ifc->netns_ino, m[i].name, dir, sizeof(dir)) ||
		    rl_pins_id(dir) != id)
			return false;
	return true;
}

bool rl_pins_owned(const struct rl_iface *ifc)
{
	struct rl_ctl ctl;

	if (read_ctl(ifc->pindir, &ctl))
		return true; /* incomplete pins: stale, whoever made them */
	if (ctl.ifindex == (__u32)ifc->ifindex && ctl.netns_ino == ifc->netns_ino)
		return true;
	if (!dir_in_use(ifc->pindir))
		return true;
	return ctl.netns_ino == ifc->netns_ino && share_owned(ifc);
}

void rl_pins_foreign_msg(const struct rl_iface *ifc, char *err, size_t errlen)
{
	struct rl_ctl ctl = {};

	/*
	 * Same namespace and name, another ifindex, and a program uses them: the
	 * interface they were made for was renamed, and this one took its name.
	 */
	read_ctl(ifc->pindir, &ctl);
	snprintf(
		err, errlen,
		"%s is in use by the limiter of another interface (ifindex %u, renamed since?): detach it under its new name first",
		ifc->pindir, ctl.ifindex);
}

int rl_prog_uses_map(int prog_fd, __u32 map_id)
{
	struct bpf_prog_info pinfo = {};
	__u32 ids[32], len = sizeof(pinfo);

	pinfo.nr_map_ids = 32;
	pinfo.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pinfo, &len))
		return -errno;
	for (__u32 i = 0; i < pinfo.nr_map_ids && i < 32; i++)
		if (ids[i] == map_id)
			return 1;
	return 0;
}

int rl_prog_uses_pins(int prog_fd, const struct rl_iface *ifc)
{
	__u32 id;

	errno = 0;
	id = rl_pins_id(ifc->pindir);
	if (!id)
		return errno && errno != ENOENT ? -errno : 0;
	return rl_prog_uses_map(prog_fd, id);
}

/*
 * The program attached alone to @ifindex, the way this version attaches:
 * 1 with its fd in *fd (to close) and XDP_FLAGS_*_MODE in *mode, 0 if there
 * is none of ours attached alone, -errno if we could not tell (libxdp's
 * queries turn some errors, such as running out of file descriptors, into
 * "nothing attached"). A dispatcher is left to libxdp: 0.
 */
int rl_prog_alone(int ifindex, int *fd, __u32 *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), id;
	int pfd;

	if (bpf_xdp_query(ifindex, 0, &q))
		return -errno;
	id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	if (!id)
		return 0;
	pfd = bpf_prog_get_fd_by_id(id);
	if (pfd < 0)
		return errno == ENOENT ? 0 : -errno; /* ENOENT: detached meanwhile */
	if (bpf_obj_get_info_by_fd(pfd, &info, &len)) {
		int ret = -errno;

		close(pfd);
		return ret;
	}
	if (!rl_prog_name_ours(info.name)) {
		close(pfd);
		return 0;
	}
	*fd = pfd;
	*mode = q.drv_prog_id == id ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
	return 1;
}

int rl_members_of(__u32 limiter_id, struct rl_member *m, int max)
{
	struct if_nameindex *ifs, *i;
	int n = 0, ret = 0;

	if (!limiter_id)
		return 0;
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index && ret >= 0; i++) {
		__u32 mode;
		int fd;

		ret = rl_prog_alone((int)i->if_index, &fd, &mode);
		if (ret == -ENODEV)
			ret = 0; /* removed meanwhile */
		if (ret <= 0)
			continue;
		ret = rl_prog_uses_map(fd, limiter_id);
		close(fd);
		if (ret <= 0)
			continue;
		if (n == max) {
			ret = -E2BIG; /* a member left out would be left on an old program */
			continue;
		}
		snprintf(m[n].name, sizeof(m[n].name), "%s", i->if_name);
		m[n].ifindex = (int)i->if_index;
		n++;
	}
	if_freenameindex(ifs);
	return ret < 0 ? ret : n;
}

int rl_members(const struct rl_iface *ifc, struct rl_member *m, int max)
{
	return rl_members_of(rl_pins_id(ifc->pindir), m, max);
}

/* Remove the maps and the directory; -errno if the directory is still there. */
/*
 * Every pin in @dir, then @dir. Not only the maps this version names: the
 * directory is one limiter's and nothing else pins there, so an orphan left by
 * an older or newer version (other map names, a "new-" pin of a killed
 * replace) goes as well.
 */
static int unpin_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	return rmdir(dir) && errno != ENOENT ? -errno : 0;
}

/* The namespace directory and the root above @dir, if they are empty now. */
static void prune_parents(const char *dir)
{
	char path[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "%s", dir);
	for (int up = 0; up < 2; up++) {
		slash = strrchr(path, '/');
		if (!slash)
			return;
		*slash = '\0';
		if (strcmp(path, RL_PIN_ROOT) && strcmp(path, RL_STAGING_ROOT) &&
		    strncmp(path, RL_PIN_ROOT "/", sizeof(RL_PIN_ROOT)) &&
		    strncmp(path, RL_STAGING_ROOT "/", sizeof(RL_STAGING_ROOT)))
			return; /* never above our roots */
		rmdir(path);
	}
}

static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + sizeof("/sys/fs/bpf"); (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

int rl_pins_make(const struct rl_iface *ifc, const int fds[RL_N_MAPS], char *err, size_t errlen)
{
	char staging[PATH_MAX], path[PATH_MAX], nsdir[PATH_MAX];
	int ret;

	/* Pin into a staging directory, then rename: the pin set appears whole. */
	ret = rl_pin_dir(RL_STAGING_ROOT, ifc->netns_ino, ifc->name, staging, sizeof(staging));
	if (ret) {
		snprintf(err, errlen, "no pin directory for '%s': %s", ifc->name, strerror(-ret));
		return ret;
	}
	unpin_dir(staging);
	ret = mkdir_p(staging);
	if (ret) {
		snprintf(err, errlen, "couldn't create %s: %s", staging, strerror(-ret));
		goto fail;
	}
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", staging, rl_map_names[i]);
		if (bpf_obj_pin(fds[i], path)) {
			ret = -errno;
			snprintf(err, errlen, "couldn't pin %s: %s", path, strerror(errno));
			goto fail;
		}
		/* Root only: the state and the configuration are security-relevant. */
		chmod(path, 0600);
	}
	snprintf(nsdir, sizeof(nsdir), RL_PIN_ROOT "/netns-%llu",
		 (unsigned long long)ifc->netns_ino);
	ret = mkdir_p(nsdir);
	if (ret) {
		snprintf(err, errlen, "couldn't create %s: %s", nsdir, strerror(-ret));
		goto fail;
	}
	if (rename(staging, ifc->pindir)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't move the pins into %s: %s", ifc->pindir,
			 strerror(errno));
		goto fail;
	}
	prune_parents(staging);
	return 0;
fail:
	unpin_dir(staging);
	prune_parents(staging);
	prune_parents(ifc->pindir);
	return ret;
}

void rl_pins_remove(const struct rl_iface *ifc)
{
	char staging[PATH_MAX];

	unpin_dir(ifc->pindir);
	prune_parents(ifc->pindir);
	if (!rl_pin_dir(RL_STAGING_ROOT, ifc->netns_ino, ifc->name, staging, sizeof(staging))) {
		unpin_dir(staging);
		prune_parents(staging);
	}
}

int rl_unpin_gone(const char *name)
{
	struct rl_iface ifc;
	char err[128];

	if (iface_paths(name, &ifc, err, sizeof(err)) || if_nametoindex(name))
		return -EINVAL;
	if (!rl_is_attached(&ifc))
		return -ENOENT;
	/* ifindex 0 never owns pins: only unused (stale) pins pass this. */
	if (!rl_pins_owned(&ifc))
		return -EBUSY;
	rl_pins_remove(&ifc);
	return 0;
}

int rl_pins_replace(const struct rl_iface *ifc, const char *name, int fd, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];

	/*
	 * Pinned beside it, then renamed over it: the name never points at
	 * nothing. bpffs refuses names with a dot.
	 */
	snprintf(path, sizeof(path), "%s/%s", ifc->pindir, name);
	snprintf(tmp, sizeof(tmp), "%s/new-%s", ifc->pindir, name);
	unlink(tmp);
	if (bpf_obj_pin(fd, tmp)) {
		snprintf(err, errlen, "couldn't pin %s: %s", tmp, strerror(errno));
		return -errno;
	}
	chmod(tmp, 0600);
	if (rename(tmp, path)) {
		int ret = -errno;

		snprintf(err, errlen, "couldn't move %s into place: %s", tmp, strerror(errno));
		unlink(tmp);
		return ret;
	}
	return 0;
}

int rl_pins_open_dir(const char *pindir, struct rl_pins *pins, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret;

	for (size_t i = 0; i < RL_N_MAPS; i++)
		pins->fd[i] = -1;
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", pindir, rl_map_names[i]);
		pins->fd[i] = bpf_obj_get(path);
		if (pins->fd[i] < 0) {
			ret = -errno;
			snprintf(err, errlen, "couldn't open %s: %s%s", path, strerror(errno),
				 errno == ENOENT ? " (a limiter made by another version of "
						   "xdp-ratelimit? detach it and attach it again)" :
						   "");
			rl_pins_close(pins);
			return ret;
		}
	}
	ret = rl_pins_check(pins, pindir, err, errlen);
	if (ret)
		rl_pins_close(pins);
	return ret;
}

/* Each map's layout as this build's object declares it (rl_map_names[] order). */
static struct map_layout {
	__u32 type, key_size, value_size;
} layout[RL_N_MAPS];
static int layout_err;
static pthread_once_t layout_once = PTHREAD_ONCE_INIT;

static void layout_init(void)
{
	struct xdp_ratelimit *skel = xdp_ratelimit__open();
	struct bpf_map *maps[RL_N_MAPS];

	if (!skel) {
		layout_err = -errno ?: -EINVAL;
		return;
	}
	rl_skel_maps(skel, maps);
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		const struct bpf_map *m = maps[i];

		layout[i].type = bpf_map__type(m);
		layout[i].key_size = bpf_map__key_size(m);
		layout[i].value_size = bpf_map__value_size(m);
	}
	xdp_ratelimit__destroy(skel);
}

int rl_pins_check(const struct rl_pins *pins, const char *pindir, char *err, size_t errlen)
{
	pthread_once(&layout_once, layout_init);
	if (layout_err) {
		snprintf(err, errlen, "couldn't read the maps' layout from the BPF object: %s",
			 strerror(-layout_err));
		return layout_err;
	}
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(pins->fd[i], &info, &len)) {
			int ret = -errno;

			snprintf(err, errlen, "couldn't inspect %s/%s: %s", pindir, rl_map_names[i],
				 strerror(errno));
			return ret;
		}
		if (info.type != layout[i].type || info.key_size != layout[i].key_size ||
		    info.value_size != layout[i].value_size) {
			snprintf(err, errlen,
				 "%s/%s is not laid out as this build's (type %u, key %u, value %u "
				 "bytes; expected %u, %u, %u): the limiter was made by another "
				 "version of xdp-ratelimit: detach it and attach it again",
				 pindir, rl_map_names[i], info.type, info.key_size, info.value_size,
				 layout[i].type, layout[i].key_size, layout[i].value_size);
			return -EPROTO;
		}
	}
	return 0;
}

void rl_pins_close(struct rl_pins *pins)
{
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		if (pins->fd[i] >= 0)
			close(pins->fd[i]);
		pins->fd[i] = -1;
	}
}

int rl_list_attached(char names[][IF_NAMESIZE], int max)
{
	char nsdir[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(nsdir, sizeof(nsdir), RL_PIN_ROOT "/netns-%llu",
		 (unsigned long long)rl_netns_ino());
	d = opendir(nsdir);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.' && !rl_pin_decode(e->d_name, names[n], IF_NAMESIZE))
			n++;
	closedir(d);
	return n;
}

/* The orphans in one namespace directory @nsdir (inode @ino) of @root, from o[n] on. */
static int scan_ns(const char *nsdir, __u64 ino, struct rl_orphan *o, int n, int max)
{
	DIR *d = opendir(nsdir);
	struct dirent *e;

	while (d && (e = readdir(d)) && n < max) {
		struct rl_orphan *x = &o[n];
		struct rl_ctl ctl;

		if (e->d_name[0] == '.' || rl_pin_decode(e->d_name, x->name, sizeof(x->name)))
			continue;
		snprintf(x->path, sizeof(x->path), "%s/%s", nsdir, e->d_name);
		if (dir_in_use(x->path))
			continue;
		x->netns_ino = ino;
		x->ifindex = read_ctl(x->path, &ctl) ? 0 : ctl.ifindex;
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

int rl_list_orphans(struct rl_orphan *o, int max)
{
	const char *roots[] = { RL_PIN_ROOT, RL_STAGING_ROOT };
	char nsdir[PATH_MAX];
	int n = 0;

	for (size_t r = 0; r < 2; r++) {
		DIR *d = opendir(roots[r]);
		struct dirent *e;

		while (d && (e = readdir(d)) && n < max) {
			unsigned long long ino;
			int end = 0;

			/* Only our namespace directories: anything else there is not ours to judge. */
			if (sscanf(e->d_name, "netns-%llu%n", &ino, &end) != 1 || e->d_name[end])
				continue;
			snprintf(nsdir, sizeof(nsdir), "%s/%s", roots[r], e->d_name);
			n = scan_ns(nsdir, ino, o, n, max);
		}
		if (d)
			closedir(d);
	}
	return n;
}

int rl_orphan_remove(const struct rl_orphan *o)
{
	int ret;

	/* Checked again: we hold the lock, but a program could have been loaded on them. */
	if (dir_in_use(o->path))
		return -EBUSY;
	ret = unpin_dir(o->path);
	prune_parents(o->path);
	return ret;
}

int rl_list_pinned(struct rl_pinned *p, int max)
{
	DIR *root = opendir(RL_PIN_ROOT);
	char nsdir[PATH_MAX];
	struct dirent *e, *f;
	int n = 0;

	while (root && (e = readdir(root)) && n < max) {
		unsigned long long ino;
		int end = 0;
		DIR *d;

		/* As rl_list_orphans(): only our namespace directories. */
		if (sscanf(e->d_name, "netns-%llu%n", &ino, &end) != 1 || e->d_name[end])
			continue;
		snprintf(nsdir, sizeof(nsdir), RL_PIN_ROOT "/%s", e->d_name);
		d = opendir(nsdir);
		while (d && (f = readdir(d)) && n < max) {
			struct rl_pinned *x = &p[n];

			if (f->d_name[0] == '.' ||
			    rl_pin_decode(f->d_name, x->name, sizeof(x->name)))
				continue;
			x->netns_ino = ino;
			snprintf(x->pindir, sizeof(x->pindir), "%s/%s", nsdir, f->d_name);
			x->orphan = !dir_in_use(x->pindir);
			n++;
		}
		if (d)
			closedir(d);
	}
	if (root)
		closedir(root);
	return n;
}
