#include <zxcvbn.h>
