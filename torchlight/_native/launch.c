/* Module 3: launching a fast kernel's compiled part from C (torchlight._native_apply.Launch, Op).
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
 * Op (below) goes one step further out: backend.map(fn) and zip(fn) themselves, the result made in C.
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

/* Off: every Launch hands every call to its Python kernel, every Op to base.py's closure
 * (fast_launch.enable, for benchmarks). */
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

/* ---------------------------------------------------------------------------------------------
 * Op: backend.map(fn) and backend.zip(fn) as one C call for their common case (Op(...), made by
 * fast_launch.py for the fast backend). base.py's closure does, for tensors a (and b) of this
 * backend, no `out` and fewer than LONG_ROWS_MIN_SIZE elements:
 *
 *   out = a._new(self.empty(shape), self)      TensorData._empty(shape), then Tensor.__init__
 *   kernel(*out._data.kernel_args(), *a._data.kernel_args(), *b._data.kernel_args())
 *   return out
 *
 * (b may have another shape: out's is then base.py's _broadcast_shapes of the two, as there.)
 * This does the same, setting the same fields in the same way (TensorData._empty and _fresh: the
 * layout from _contiguous_layout(shape), numpy.empty(size), a new _Version, the kernel arguments;
 * Tensor.__init__:
 * _data, backend, history None, _output_nr 0, unique_id from Variable._next_id(), grad None, the
 * float64 label), then calls the kernel (a Launch). tests/module3/test_native_apply.py pins the
 * source of each Python method whose steps this takes; any other call goes to base.py's closure.
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD int arity;   /* 1: map, 2: zip */
    PyObject *python_op;       /* base.py's closure: every call this does not take */
    PyObject *kernel;          /* the kernel the closure calls (a Launch) */
    PyObject *backend;         /* the TensorBackend */
    PyObject *tensor_type, *data_type, *version_type, *layout, *numpy_empty, *next_id, *float64_label;
    PyObject *base_globals;    /* base.py's: LONG_ROWS_MIN_SIZE, read on each call */
    vectorcallfunc vectorcall;
    unsigned long long calls, handed;
} Op;

static PyObject *s_broadcast_shapes, *s_backend, *s_data_, *s_shape, *s_kernel_args_, *s_kernel_args, *s_long_rows, *s_storage,
    *s_offset, *s_strides, *s_size, *s_version, *s_history, *s_output_nr, *s_unique_id, *s_grad, *s_dtype_;

static PyObject *op_hand_over(Op *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    self->handed++;
    return PyObject_Vectorcall(self->python_op, args, nargsf, kwnames);
}

/* object.__new__(type): an instance whose fields are then set one by one, as __init__ would (apply.c). */
PyObject *new_plain(PyObject *type);

/* data.kernel_args(): the cached tuple, else the method (which caches it). */
static inline PyObject *kernel_args_of(PyObject *data) {
    PyObject *args = PyObject_GetAttr(data, s_kernel_args_);
    if (args == NULL || args != Py_None)
        return args;
    Py_DECREF(args);
    return PyObject_CallMethodNoArgs(data, s_kernel_args);
}

static int set_fields(PyObject *o, PyObject *const *names, PyObject *const *values, int n) {
    for (int i = 0; i < n; i++)
        if (PyObject_SetAttr(o, names[i], values[i]) < 0)
            return -1;
    return 0;
}

static PyObject *op_call(Op *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    self->calls++;
    if (!enabled || kwnames != NULL || nargs != self->arity)
        return op_hand_over(self, args, nargsf, kwnames);
    PyObject *data[2] = {NULL, NULL}, *layout = NULL, *storage = NULL, *version = NULL, *od = NULL, *out = NULL;
    PyObject *id = NULL, *out_args = NULL, *in_args[2] = {NULL, NULL}, *result = NULL;
    int take = 1;
    for (int i = 0; i < self->arity && take; i++) {
        if (!Py_IS_TYPE(args[i], (PyTypeObject *)self->tensor_type)) {
            take = 0;
            break;
        }
        PyObject *be = PyObject_GetAttr(args[i], s_backend);
        if (be == NULL)
            goto fail;
        take = be == self->backend;
        Py_DECREF(be);
        if (!take)
            break;
        data[i] = PyObject_GetAttr(args[i], s_data_);
        if (data[i] == NULL)
            goto fail;
        take = Py_IS_TYPE(data[i], (PyTypeObject *)self->data_type);
    }
    PyObject *shape = NULL;
    if (take) {
        shape = PyObject_GetAttr(data[0], s_shape);
        if (shape == NULL)
            goto fail;
        take = PyTuple_CheckExact(shape);
        if (take && self->arity == 2) {
            PyObject *other = PyObject_GetAttr(data[1], s_shape);
            if (other == NULL) {
                Py_DECREF(shape);
                goto fail;
            }
            int same = other == shape || (PyTuple_CheckExact(other) && PyObject_RichCompareBool(shape, other, Py_EQ) == 1);
            if (!same && !PyErr_Occurred()) { /* shape = _broadcast_shapes(a's, b's), base.py's cached one */
                PyObject *broadcast = PyDict_GetItemWithError(self->base_globals, s_broadcast_shapes); /* borrowed */
                PyObject *both[2] = {shape, other};
                PyObject *joint = broadcast == NULL ? NULL : PyObject_Vectorcall(broadcast, both, 2, NULL);
                Py_SETREF(shape, joint);
                if (shape == NULL)
                    PyErr_Clear(); /* shapes that do not broadcast: base.py says so */
                take = shape != NULL && PyTuple_CheckExact(shape);
            }
            Py_DECREF(other);
            if (PyErr_Occurred()) {
                Py_XDECREF(shape);
                goto fail;
            }
        }
    }
    if (take) { /* TensorData._empty(shape) */
        layout = PyObject_CallOneArg(self->layout, shape);
        if (layout == NULL) {
            Py_DECREF(shape);
            goto fail;
        }
        PyObject *long_rows = PyDict_GetItemWithError(self->base_globals, s_long_rows); /* borrowed */
        Py_ssize_t size = -1, min_long = -1;
        if (PyTuple_CheckExact(layout) && PyTuple_GET_SIZE(layout) == 4 && PyLong_CheckExact(PyTuple_GET_ITEM(layout, 1)))
            size = PyLong_AsSsize_t(PyTuple_GET_ITEM(layout, 1));
        if (long_rows != NULL && PyLong_CheckExact(long_rows))
            min_long = PyLong_AsSsize_t(long_rows);
        if (PyErr_Occurred())
            PyErr_Clear();
        take = size >= 0 && min_long >= 0 && size < min_long; /* (else base.py's long-rows path) */
    }
    if (!take) {
        Py_XDECREF(shape);
        Py_XDECREF(layout);
        Py_XDECREF(data[0]);
        Py_XDECREF(data[1]);
        return op_hand_over(self, args, nargsf, kwnames);
    }
    PyObject *strides = PyTuple_GET_ITEM(layout, 0), *size = PyTuple_GET_ITEM(layout, 1);
    if ((storage = PyObject_CallOneArg(self->numpy_empty, size)) == NULL ||
        (version = PyObject_CallNoArgs(self->version_type)) == NULL ||
        (out_args = PyTuple_Pack(3, storage, PyTuple_GET_ITEM(layout, 2), PyTuple_GET_ITEM(layout, 3))) == NULL ||
        (od = new_plain(self->data_type)) == NULL) {
        Py_DECREF(shape);
        goto fail;
    }
    {
        PyObject *names[] = {s_storage, s_offset, s_shape, s_strides, s_size, s_version, s_kernel_args_};
        PyObject *zero = PyLong_FromLong(0);
        PyObject *values[] = {storage, zero, shape, strides, size, version, out_args};
        int r = zero == NULL ? -1 : set_fields(od, names, values, 7);
        Py_XDECREF(zero);
        Py_DECREF(shape);
        if (r < 0)
            goto fail;
    }
    /* Tensor.__init__(od, backend) */
    if ((out = new_plain(self->tensor_type)) == NULL)
        goto fail;
    {
        PyObject *names[] = {s_backend, s_data_, s_history};
        PyObject *values[] = {self->backend, od, Py_None};
        if (set_fields(out, names, values, 3) < 0)
            goto fail;
        PyObject *zero = PyLong_FromLong(0);
        int r = zero == NULL ? -1 : PyObject_SetAttr(out, s_output_nr, zero);
        Py_XDECREF(zero);
        if (r < 0 || (id = PyObject_CallNoArgs(self->next_id)) == NULL)
            goto fail;
        PyObject *names2[] = {s_unique_id, s_grad, s_dtype_};
        PyObject *values2[] = {id, Py_None, self->float64_label};
        if (set_fields(out, names2, values2, 3) < 0)
            goto fail;
    }
    /* kernel(*out._data.kernel_args(), *a._data.kernel_args(), *b._data.kernel_args()) */
    PyObject *call[9];
    int n = 0;
    for (int k = 0; k < 3; k++)
        call[n++] = PyTuple_GET_ITEM(out_args, k);
    for (int i = 0; i < self->arity; i++) {
        in_args[i] = kernel_args_of(data[i]);
        if (in_args[i] == NULL)
            goto fail;
        if (!PyTuple_CheckExact(in_args[i]) || PyTuple_GET_SIZE(in_args[i]) != 3) {
            PyErr_SetString(PyExc_TypeError, "kernel_args() must return (storage, shape, strides)");
            goto fail;
        }
        for (int k = 0; k < 3; k++)
            call[n++] = PyTuple_GET_ITEM(in_args[i], k);
    }
    PyObject *r = PyObject_Vectorcall(self->kernel, call, n, NULL);
    if (r == NULL)
        goto fail;
    Py_DECREF(r);
    result = Py_NewRef(out);
fail:
    Py_XDECREF(data[0]);
    Py_XDECREF(data[1]);
    Py_XDECREF(layout);
    Py_XDECREF(storage);
    Py_XDECREF(version);
    Py_XDECREF(od);
    Py_XDECREF(out);
    Py_XDECREF(id);
    Py_XDECREF(out_args);
    Py_XDECREF(in_args[0]);
    Py_XDECREF(in_args[1]);
    return result;
}

static PyObject *op_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"arity", "python_op", "kernel", "backend", "refs", NULL};
    int arity;
    PyObject *python_op, *kernel, *backend, *refs;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iOOOO!:Op", names, &arity, &python_op, &kernel, &backend,
                                     &PyDict_Type, &refs))
        return NULL;
    if ((arity != 1 && arity != 2) || !PyCallable_Check(python_op) || !PyCallable_Check(kernel)) {
        PyErr_SetString(PyExc_ValueError, "Op: expected an arity of 1 or 2, the Python op and its kernel");
        return NULL;
    }
    static const char *keys[] = {"Tensor", "TensorData", "_Version", "_contiguous_layout", "numpy.empty",
                                 "Variable._next_id", "float64", "base"};
    PyObject *got[8];
    for (int i = 0; i < 8; i++) {
        got[i] = PyDict_GetItemString(refs, keys[i]); /* borrowed */
        if (got[i] == NULL) {
            PyErr_Format(PyExc_KeyError, "Op: refs lacks %s", keys[i]);
            return NULL;
        }
    }
    if (!PyType_Check(got[0]) || !PyType_Check(got[1]) || !PyType_Check(got[2]) || !PyDict_Check(got[7])) {
        PyErr_SetString(PyExc_TypeError, "Op: Tensor, TensorData and _Version must be classes, base a dict");
        return NULL;
    }
    Op *self = (Op *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->arity = arity;
    self->python_op = Py_NewRef(python_op);
    self->kernel = Py_NewRef(kernel);
    self->backend = Py_NewRef(backend);
    self->tensor_type = Py_NewRef(got[0]);
    self->data_type = Py_NewRef(got[1]);
    self->version_type = Py_NewRef(got[2]);
    self->layout = Py_NewRef(got[3]);
    self->numpy_empty = Py_NewRef(got[4]);
    self->next_id = Py_NewRef(got[5]);
    self->float64_label = Py_NewRef(got[6]);
    self->base_globals = Py_NewRef(got[7]);
    self->vectorcall = (vectorcallfunc)op_call;
    return (PyObject *)self;
}

static int op_traverse(Op *self, visitproc visit, void *arg) {
    Py_VISIT(self->python_op);
    Py_VISIT(self->kernel);
    Py_VISIT(self->backend);
    Py_VISIT(self->layout);
    Py_VISIT(self->numpy_empty);
    Py_VISIT(self->next_id);
    Py_VISIT(self->float64_label);
    Py_VISIT(self->base_globals);
    return 0;
}

static int op_clear(Op *self) {
    Py_CLEAR(self->python_op);
    Py_CLEAR(self->kernel);
    Py_CLEAR(self->backend);
    Py_CLEAR(self->layout);
    Py_CLEAR(self->numpy_empty);
    Py_CLEAR(self->next_id);
    Py_CLEAR(self->float64_label);
    Py_CLEAR(self->base_globals);
    return 0;
}

static void op_dealloc(Op *self) {
    PyObject_GC_UnTrack(self);
    op_clear(self);
    Py_CLEAR(self->tensor_type);
    Py_CLEAR(self->data_type);
    Py_CLEAR(self->version_type);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *op_stats(Op *self, PyObject *unused) {
    return Py_BuildValue("(KK)", self->calls, self->handed);
}

static PyObject *op_get_python_op(Op *self, void *closure) {
    return Py_NewRef(self->python_op);
}

static PyMethodDef op_methods[] = {
    {"stats", (PyCFunction)op_stats, METH_NOARGS,
     "stats() -> (calls, handed): calls, and those handed to base.py's closure."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef op_getset[] = {
    {"python_op", (getter)op_get_python_op, NULL, "base.py's closure, which takes every call this does not", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject OpType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torchlight._native_apply.Op",
    .tp_basicsize = sizeof(Op),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = PyDoc_STR("Op(arity, python_op, kernel, backend, refs)\n\nbackend.map(fn) (arity 1) or zip(fn) "
                        "(arity 2) whose common case is one call into C; every other call goes to python_op "
                        "(backends/fast_launch.py)."),
    .tp_new = op_new,
    .tp_dealloc = (destructor)op_dealloc,
    .tp_traverse = (traverseproc)op_traverse,
    .tp_clear = (inquiry)op_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Op, vectorcall),
    .tp_methods = op_methods,
    .tp_getset = op_getset,
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
#define I(var, text)                                 \
    if (!(var = PyUnicode_InternFromString(text))) \
        return -1;
    I(s_broadcast_shapes, "_broadcast_shapes") I(s_backend, "backend") I(s_data_, "_data") I(s_shape, "shape") I(s_kernel_args_, "_kernel_args")
    I(s_kernel_args, "kernel_args") I(s_long_rows, "LONG_ROWS_MIN_SIZE") I(s_storage, "storage") I(s_offset, "offset")
    I(s_strides, "strides") I(s_size, "size") I(s_version, "version") I(s_history, "history")
    I(s_output_nr, "_output_nr") I(s_unique_id, "unique_id") I(s_grad, "grad") I(s_dtype_, "_dtype")
#undef I
    if (PyType_Ready(&OpType) < 0 || PyModule_AddObjectRef(module, "Op", (PyObject *)&OpType) < 0)
        return -1;
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
