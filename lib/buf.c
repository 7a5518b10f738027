// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"

#define MIN_BYTES 256

int array__reserve(void *arrp, size_t *cap, size_t need, size_t elem_size)
{
	size_t ncap = *cap ? *cap : (MIN_BYTES + elem_size - 1) / elem_size;
	void *arr, *narr;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem_size)
		return -ENOMEM;
	memcpy(&arr, arrp, sizeof(arr));
	narr = realloc(arr, ncap * elem_size);
	if (!narr)
		return -ENOMEM;
	memcpy(arrp, &narr, sizeof(narr));
	*cap = ncap;
	return 0;
}

int buf__reserve(unsigned char **buf, size_t *cap, size_t need)
{
	return array__reserve(buf, cap, need, 1);
}
