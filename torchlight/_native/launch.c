/* Module 3: launching a fast kernel's compiled part from C (torchlight._native_apply.Launch).
 *
 * A small operation of the fast backend spends most of its time getting to the machine code:
 * backends/fast.py's _Kernel.__call__ picks the serial or the parallel case, then numba's
 * dispatcher looks at nine numpy arrays, works out their types and unpacks them, about 1.5
 * microseconds for a few nanoseconds of arithmetic. A Launch does the serial case in one C call:
 * it checks each argument is what the compiled signature takes (a 1-D, C-contiguous, aligned,
 * writable float64 or int64 numpy array), and calls the part that numba compiled, the very same
 * function, at the address numba gives it (backends/fast_launch.py).
 *
 * The address is the part's own entry, in numba's calling convention: a status is returned, the
 * arguments follow a return slot and an exception slot, and each array is passed as the fields of
 * numba's array structure, one after another (meminfo, parent, nitems, itemsize, data, shape,
 * strides, the last two one value each for a 1-D array). The status says whether the part raised;
 * when it did, the call is made again through the Python kernel, which raises the part's own
 * exception (a part writes each element of out from the inputs alone, so running it twice gives
 * the same out).
 *
 * Everything else goes to the Python kernel, unchanged: a large operation (the parallel case), a
 * reduction along long last-dimension lines (fast.py's lines_part), an argument of another kind.
 *
 * Reading an array without numpy's headers (so that building needs no numpy): numpy's array object
 * starts with the same fields in numpy 1.x and 2.x (PyArrayObject_fields below); fast_launch.py
 * checks this file reads them right (fields()) before it makes any Launch.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

/* The first fields of numpy's PyArrayObject_fields (numpy/ndarraytypes.h), whose layout numpy keeps. */
typedef struct {
    PyObject_HEAD char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} ndarray_fields;

#define NPY_C_CONTIGUOUS 0x0001
#define NPY_ALIGNED 0x0100
#define NPY_WRITEABLE 0x0400
#define NPY_NEEDED (NPY_C_CONTIGUOUS | NPY_ALIGNED | NPY_WRITEABLE)

enum { MAP = 0, ZIP = 1, REDUCE = 2 };
#define MAX_ARRAYS 9

/* One array as numba passes it: meminfo, parent, nitems, itemsize, data, shape[0], strides[0]. */
#define ARRAY void *, void *, int64_t, int64_t, void *, int64_t, int64_t
#define PASS(k) NULL, a[k].object, a[k].n, 8, a[k].data, a[k].n, a[k].stride
typedef int32_t (*map_part)(void *, void *, int64_t, int64_t, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY);
typedef int32_t (*zip_part)(void *, void *, int64_t, int64_t, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY,
                            ARRAY);
typedef int32_t (*reduce_part)(void *, void *, int64_t, int64_t, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY, ARRAY, int64_t,
                               double);

/* numba's status codes (numba/core/callconv.py): 0 is success, -2 a function that returned None. */
#define STATUS_OK 0
#define STATUS_NONE (-2)

typedef struct {
    PyObject_HEAD void *address; /* the compiled part's entry */
    int kind;                    /* MAP, ZIP or REDUCE */
    int narrays;                 /* 6, 9, 6: (storage, shape, strides) per tensor */
    PyObject *settings;          /* fast.py's globals: PARALLEL_THRESHOLD, LINES_MIN_LENGTH, LINES, read on each call */
    PyObject *fallback;          /* the Python kernel: every call this does not take */
    PyObject *ndarray, *f64, *i64;
    vectorcallfunc vectorcall;
    unsigned long long calls, handed; /* calls, and those handed to the Python kernel */
} Launch;

/* Off: every Launch hands every call to its Python kernel (fast_launch.enable, for benchmarks). */
static int enabled = 1;

typedef struct {
    PyObject *object;
    void *data;
    int64_t n, stride;
} array_arg;

/* The array's fields if it is what the compiled part takes (a 1-D, C-contiguous, aligned, writable
 * numpy array of dtype `descr`, which numba would pass without copying); 0 otherwise. */
static inline int read_array(Launch *self, PyObject *o, PyObject *descr, array_arg *out) {
    if (!Py_IS_TYPE(o, (PyTypeObject *)self->ndarray))
        return 0;
    ndarray_fields *f = (ndarray_fields *)o;
    if (f->nd != 1 || f->descr != descr || (f->flags & NPY_NEEDED) != NPY_NEEDED)
        return 0;
    out->object = o;
    out->data = f->data;
    out->n = f->dimensions[0];
    out->stride = f->strides[0];
    return 1;
}

static PyObject *s_threshold, *s_lines_min_length, *s_lines;

/* settings[name] as a Py_ssize_t, or -1 where it is missing or not an int (then the Python kernel runs). */
static inline Py_ssize_t setting(Launch *self, PyObject *name) {
    PyObject *v = PyDict_GetItemWithError(self->settings, name); /* borrowed */
    if (v == NULL || !PyLong_CheckExact(v)) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t n = PyLong_AsSsize_t(v);
    if (n == -1)
        PyErr_Clear(); /* (a value past Py_ssize_t: the Python kernel decides) */
    return n;
}

static PyObject *hand_over(Launch *self, PyObject *const *args, size_t nargsf) {
    self->handed++;
    return PyObject_Vectorcall(self->fallback, args, nargsf, NULL);
}

static PyObject *launch_call(Launch *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    self->calls++;
    if (!enabled || self->address == NULL)
        return hand_over(self, args, nargsf);
    int extra = self->kind == REDUCE ? 2 : 0;
    if (kwnames != NULL || nargs != self->narrays + extra)
        return hand_over(self, args, nargsf); /* (it says what is wrong) */
    array_arg a[MAX_ARRAYS];
    for (int k = 0; k < self->narrays; k++)
        if (!read_array(self, args[k], k % 3 == 0 ? self->f64 : self->i64, &a[k]))
            return hand_over(self, args, nargsf);
    int64_t reduce_dim = 0;
    double start = 0.0;
    if (self->kind == REDUCE) {
        if (!PyLong_CheckExact(args[6]) || !PyFloat_CheckExact(args[7]))
            return hand_over(self, args, nargsf);
        int overflow = 0;
        reduce_dim = PyLong_AsLongLongAndOverflow(args[6], &overflow);
        if (overflow || (reduce_dim == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return hand_over(self, args, nargsf);
        }
        start = PyFloat_AS_DOUBLE(args[7]);
        /* fast._Kernel._lines_or_part: a reduction along long last-dimension lines takes lines_part */
        const int64_t *a_shape = (const int64_t *)a[4].data;
        if (reduce_dim == a[4].n - 1) {
            Py_ssize_t min_length = setting(self, s_lines_min_length), lines = setting(self, s_lines);
            if (a[4].n == 0 || min_length < 0 || lines < 0 ||
                (a_shape[reduce_dim] >= min_length && a[3].n >= 2 * lines * a_shape[reduce_dim]))
                return hand_over(self, args, nargsf);
        }
    }
    /* the work: out's storage, or for a reduction the input's (as _Kernel._work_arg) */
    Py_ssize_t threshold = setting(self, s_threshold);
    if (threshold < 0 || (self->kind == REDUCE ? a[3].n : a[0].n) >= threshold)
        return hand_over(self, args, nargsf); /* the parallel case */

    char ret[16];
    void *exc = NULL;
    int32_t status;
    if (self->kind == MAP)
        status = ((map_part)self->address)(ret, &exc, 0, 1, PASS(0), PASS(1), PASS(2), PASS(3), PASS(4), PASS(5));
    else if (self->kind == ZIP)
        status = ((zip_part)self->address)(ret, &exc, 0, 1, PASS(0), PASS(1), PASS(2), PASS(3), PASS(4), PASS(5),
                                           PASS(6), PASS(7), PASS(8));
    else
        status = ((reduce_part)self->address)(ret, &exc, 0, 1, PASS(0), PASS(1), PASS(2), PASS(3), PASS(4),
                                              PASS(5), reduce_dim, start);
    if (status != STATUS_OK && status != STATUS_NONE)
        return hand_over(self, args, nargsf); /* the part raised: numba's dispatcher raises it again */
    Py_RETURN_NONE;
}

static PyObject *launch_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"address", "kind", "fallback", "ndarray", "float64", "int64", "settings", NULL};
    unsigned long long address;
    int kind;
    PyObject *fallback, *ndarray, *f64, *i64, *settings;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "KiOOOOO!:Launch", names, &address, &kind, &fallback, &ndarray, &f64,
                                     &i64, &PyDict_Type, &settings))
        return NULL;
    if (address == 0 || kind < MAP || kind > REDUCE || !PyType_Check(ndarray) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_ValueError, "Launch: expected a part's address, a kind of 0-2, a callable and a type");
        return NULL;
    }
    Launch *self = (Launch *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->address = (void *)(uintptr_t)address;
    self->kind = kind;
    self->narrays = kind == ZIP ? 9 : 6;
    self->settings = Py_NewRef(settings);
    self->fallback = Py_NewRef(fallback);
    self->ndarray = Py_NewRef(ndarray);
    self->f64 = Py_NewRef(f64);
    self->i64 = Py_NewRef(i64);
    self->vectorcall = (vectorcallfunc)launch_call;
    return (PyObject *)self;
}

static int launch_traverse(Launch *self, visitproc visit, void *arg) {
    Py_VISIT(self->fallback);
    Py_VISIT(self->settings);
    return 0;
}

static int launch_clear(Launch *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->settings);
    return 0;
}

static void launch_dealloc(Launch *self) {
    PyObject_GC_UnTrack(self);
    launch_clear(self);
    Py_CLEAR(self->ndarray);
    Py_CLEAR(self->f64);
    Py_CLEAR(self->i64);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *launch_stats(Launch *self, PyObject *unused) {
    return Py_BuildValue("(KK)", self->calls, self->handed);
}

static PyObject *launch_get_fallback(Launch *self, void *closure) {
    return Py_NewRef(self->fallback);
}

/* Anything else a Launch is asked for is its kernel's (kind, part, ...): it stands for the kernel. */
static PyObject *launch_getattro(PyObject *self, PyObject *name) {
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(((Launch *)self)->fallback, name);
}

/* Setting one sets it on the kernel, which may then run something else than the part this calls:
 * from then on every call goes to the kernel. */
static int launch_setattro(PyObject *self, PyObject *name, PyObject *value) {
    ((Launch *)self)->address = NULL;
    return PyObject_SetAttr(((Launch *)self)->fallback, name, value);
}

static PyMethodDef launch_methods[] = {
    {"stats", (PyCFunction)launch_stats, METH_NOARGS,
     "stats() -> (calls, handed): calls, and those handed to the Python kernel."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef launch_getset[] = {
    {"fallback", (getter)launch_get_fallback, NULL, "the Python kernel, which takes every call this does not", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torchlight._native_apply.Launch",
    .tp_basicsize = sizeof(Launch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = PyDoc_STR("Launch(address, kind, fallback, ndarray, float64, int64, settings)\n\nA fast kernel whose serial case is one call into C; every other call goes to "
                        "fallback (backends/fast_launch.py)."),
    .tp_new = launch_new,
    .tp_dealloc = (destructor)launch_dealloc,
    .tp_traverse = (traverseproc)launch_traverse,
    .tp_clear = (inquiry)launch_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Launch, vectorcall),
    .tp_getattro = launch_getattro,
    .tp_setattro = launch_setattro,
    .tp_methods = launch_methods,
    .tp_getset = launch_getset,
};

/* fields(array) -> (data address, ndim, first size, first stride, flags), as this file reads them. */
static PyObject *launch_fields(PyObject *module, PyObject *o) {
    if (strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") != 0) {
        PyErr_SetString(PyExc_TypeError, "fields() takes a numpy array");
        return NULL;
    }
    ndarray_fields *f = (ndarray_fields *)o;
    if (f->nd < 1)
        return Py_BuildValue("(Kinni)", (unsigned long long)(uintptr_t)f->data, f->nd, (Py_ssize_t)0, (Py_ssize_t)0,
                             f->flags);
    return Py_BuildValue("(Kinni)", (unsigned long long)(uintptr_t)f->data, f->nd, f->dimensions[0], f->strides[0],
                         f->flags);
}

static PyObject *launch_enable(PyObject *module, PyObject *flag) {
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    int was = enabled;
    enabled = on;
    return PyBool_FromLong(was);
}

PyMethodDef torchlight_launch_functions[] = {
    {"launch_enable", launch_enable, METH_O,
     "launch_enable(flag) -> bool: turn every Launch on or off (off: each hands its calls to its Python kernel); "
     "returns the previous setting."},
    {"fields", launch_fields, METH_O,
     "fields(array) -> (data, ndim, size, stride, flags): a 1-D numpy array's fields as Launch reads them "
     "(backends/fast_launch.py checks them against numpy's own before making a Launch)."},
    {NULL, NULL, 0, NULL},
};

/* Called by the module's init (apply.c). */
int torchlight_add_launch(PyObject *module) {
    if (!(s_threshold = PyUnicode_InternFromString("PARALLEL_THRESHOLD")) ||
        !(s_lines_min_length = PyUnicode_InternFromString("LINES_MIN_LENGTH")) ||
        !(s_lines = PyUnicode_InternFromString("LINES")))
        return -1;
    if (PyType_Ready(&LaunchType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "Launch", (PyObject *)&LaunchType) < 0)
        return -1;
    return PyModule_AddFunctions(module, torchlight_launch_functions);
}
