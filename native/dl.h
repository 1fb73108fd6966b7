// Loading NVIDIA libraries with dlopen, shared by shim.c and cupti.c.
#ifndef C3_DL_H
#define C3_DL_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

// c3_open_first opens the first of names (NULL-terminated) that loads, or
// writes why the first could not into err and returns NULL.
void *c3_open_first(const char *const *names, char *err, size_t errlen);

// SYM loads a required symbol into t->field from t->handle; the first of
// the alternative names that exists wins. When none does, it closes the
// library, writes which symbol is missing into err and returns -1 from the
// calling function (which must have err and errlen in scope).
#define SYM(t, field, ...)                                                                  \
	do {                                                                                    \
		const char *alts[] = {__VA_ARGS__, NULL};                                           \
		for (int i_ = 0; alts[i_] && !(t)->field; i_++)                                     \
			*(void **)(&(t)->field) = dlsym((t)->handle, alts[i_]);                         \
		if (!(t)->field) {                                                                  \
			snprintf(err, errlen, "symbol %s missing", alts[0]);                            \
			dlclose((t)->handle);                                                           \
			(t)->handle = NULL;                                                             \
			return -1;                                                                      \
		}                                                                                   \
	} while (0)

// OPT loads an optional symbol (NULL when absent).
#define OPT(t, field, name) (*(void **)(&(t)->field) = dlsym((t)->handle, name))

#endif
