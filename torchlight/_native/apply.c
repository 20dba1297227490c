/* Module 3: the fused native Function.apply (torchlight._native_apply).
 *
 * The same steps as Function.apply in torchlight/autograd/function.py, in one crossing into C:
 * unpack the arguments, make the Context, run forward with recording off, wrap the outputs,
 * record their History, run forward-mode AD. autograd/native.py registers it on Function (an
 * extension point) when the module is built and TORCHLIGHT_NATIVE is not 0.
 *
 * Every step calls the same Python methods the Python apply calls, through the same lookups, so
 * that a Function subclass, module 5's extensions and a student's code run exactly as they do
 * there. A few steps of the common case are done here instead of by calling Python: each only
 * after checking, on every call, that the method it stands for is the very function object that
 * native.py registered (a lookup in the type's method cache); the test
 * tests/module3/test_native_apply.py pins those methods' source, so that a change to one of them
 * fails until this file follows it. The steps done here:
 *
 *   Tensor._forward_value(a)   -> a                 Scalar._forward_value(a) -> a.data
 *   Tensor._wrap_output(o)     -> o if isinstance(o, Tensor) else None
 *   Context()                  -> a new Context (its __init__ sets nothing without arguments)
 *   History(cls, ctx, args)    -> last_fn, ctx, inputs, stamp = next(function._stamps), set in order
 *   Variable._set_history(h, i)-> w.history = h; w._output_nr = i
 *   module 5's _run_forward    -> cls.forward(ctx, *raw, **kwargs) when setup_context is the default
 *   module 5's _saved_recorded -> ctx._saved_versions = tuple of each saved value's _version
 *
 * Anything else (several outputs, mark_dirty, mark_non_differentiable, forward-mode AD, Scalars'
 * outputs, a Parameter among the arguments, any overridden method) calls the Python code.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030D0000
#define LOOKUP_ATTR PyObject_GetOptionalAttr
#else
#define LOOKUP_ATTR _PyObject_LookupAttr
#endif

/* What native.py hands over (init): the classes, the reference methods, the thread's grad mode. */
static PyObject *Variable, *ContextT, *HistoryT, *Tensor, *Scalar;
static PyObject *grad_state;       /* grad_mode._state (a threading.local) */
static PyObject *function_globals; /* function.py's globals: _stamps is read from there, as History does */
static PyObject *py_apply;         /* the Python apply's function: calls that the fast path does not take */
static PyObject *ref_ctx_init, *ref_hist_init, *ref_object_new, *ref_run_forward, *ref_record, *ref_saved_recorded,
    *ref_set_history, *ref_tensor_forward_value, *ref_scalar_forward_value, *ref_tensor_wrap_output,
    *ref_tensor_version;
static PyTypeObject *count_type; /* itertools.count */
static int ready = 0;
static unsigned long long n_calls = 0, n_fallbacks = 0;

static PyObject *empty_tuple;

/* interned attribute names */
static PyObject *s_history, *s_forward_value, *s_needs_input_grad, *s_fn, *s_mode, *s_run_forward, *s_setup_context,
    *s_default, *s_forward, *s_dirty, *s_check_dirty, *s_wrap_output, *s_alias, *s_record, *s_non_differentiable,
    *s_set_history, *s_output_nr, *s_saved, *s_saved_recorded, *s_saved_versions, *s_version, *s_data_, *s_version_,
    *s_value, *s_forward_mode, *s_last_fn, *s_ctx, *s_inputs, *s_stamp, *s_stamps, *s_init, *s_new, *s_data,
    *s_History;

static int intern_names(void) {
#define I(var, text)                                 \
    if (!(var = PyUnicode_InternFromString(text))) \
        return -1;
    I(s_history, "history") I(s_forward_value, "_forward_value") I(s_needs_input_grad, "needs_input_grad")
    I(s_fn, "_fn") I(s_mode, "mode") I(s_run_forward, "_run_forward") I(s_setup_context, "setup_context")
    I(s_default, "_default") I(s_forward, "forward") I(s_dirty, "_dirty") I(s_check_dirty, "_check_dirty")
    I(s_wrap_output, "_wrap_output") I(s_alias, "_alias") I(s_record, "_record")
    I(s_non_differentiable, "_non_differentiable") I(s_set_history, "_set_history") I(s_output_nr, "_output_nr")
    I(s_saved, "_saved") I(s_saved_recorded, "_saved_recorded") I(s_saved_versions, "_saved_versions")
    I(s_version, "_version") I(s_data_, "_data") I(s_version_, "version") I(s_value, "value")
    I(s_forward_mode, "_forward_mode") I(s_last_fn, "last_fn") I(s_ctx, "ctx") I(s_inputs, "inputs")
    I(s_stamp, "stamp") I(s_stamps, "_stamps") I(s_init, "__init__") I(s_new, "__new__") I(s_data, "data")
    I(s_History, "History")
#undef I
    return 0;
}

/* The member of a type's MRO named name (borrowed; NULL if none): what attribute lookup on the
 * type, or on an instance without its own __dict__, starts from. Uses the type's method cache. */
static inline PyObject *type_lookup(PyObject *type, PyObject *name) {
    return _PyType_Lookup((PyTypeObject *)type, name);
}

static inline int has(PyObject *type, PyObject *name, PyObject *ref) {
    return ref != NULL && type_lookup(type, name) == ref;
}

/* A plain class whose instances can be made as type() makes them, without running __init__:
 * `type` as metaclass, object's __new__, and the reference __init__ (which sets nothing here). */
static inline int plain_constructible(PyObject *type, PyObject *init_ref) {
    PyTypeObject *t = (PyTypeObject *)type;
    return Py_IS_TYPE(type, &PyType_Type) && t->tp_new == PyBaseObject_Type.tp_new &&
           type_lookup(type, s_new) == ref_object_new && has(type, s_init, init_ref);
}

PyObject *new_plain(PyObject *type) { /* (launch.c's Op makes its results with it too) */
    return PyBaseObject_Type.tp_new((PyTypeObject *)type, empty_tuple, NULL);
}

/* `x in values` by identity (function._is_one_of). -1 on error. */
static int is_one_of(PyObject *x, PyObject *values) {
    if (PyTuple_CheckExact(values) || PyList_CheckExact(values)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(values);
        PyObject **items = PySequence_Fast_ITEMS(values);
        for (Py_ssize_t i = 0; i < n; i++)
            if (items[i] == x)
                return 1;
        return 0;
    }
    PyObject *it = PyObject_GetIter(values);
    if (it == NULL)
        return -1;
    PyObject *v;
    int found = 0;
    while ((v = PyIter_Next(it)) != NULL) {
        found = v == x;
        Py_DECREF(v);
        if (found)
            break;
    }
    Py_DECREF(it);
    if (!found && PyErr_Occurred())
        return -1;
    return found;
}

static inline int in_array(PyObject *x, PyObject *const *items, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (items[i] == x)
            return 1;
    return 0;
}

/* Builtin values that have no attribute `value` (so cannot be an nn.Parameter-like holder). */
static inline int plain_builtin(PyObject *a) {
    return a == Py_None || PyFloat_CheckExact(a) || PyLong_CheckExact(a) || PyBool_Check(a) ||
           PyUnicode_CheckExact(a) || PyTuple_CheckExact(a) || PyList_CheckExact(a) || PyDict_CheckExact(a) ||
           PySlice_Check(a) || a == Py_Ellipsis;
}

/* The Python apply, for what the fast path leaves to it: py_apply(cls, *args, **kwargs). */
static PyObject *call_python_apply(PyObject *const *stack, size_t nargsf, PyObject *kwnames) {
    n_fallbacks++;
    return PyObject_Vectorcall(py_apply, stack, nargsf, kwnames);
}

static PyObject *kwargs_dict(PyObject *const *kwvalues, PyObject *kwnames) {
    PyObject *d = PyDict_New();
    if (d == NULL || kwnames == NULL)
        return d;
    Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyDict_SetItem(d, PyTuple_GET_ITEM(kwnames, i), kwvalues[i]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* v._version, for ctx._saved_versions (inplace_tracking.snapshot_saved). */
static PyObject *version_of(PyObject *v) {
    if (Py_IS_TYPE(v, (PyTypeObject *)Tensor) && has(Tensor, s_version, ref_tensor_version)) {
        /* Tensor._version: self._data.version.value */
        PyObject *data = PyObject_GetAttr(v, s_data_);
        if (data == NULL)
            return NULL;
        PyObject *ver = PyObject_GetAttr(data, s_version_);
        Py_DECREF(data);
        if (ver == NULL)
            return NULL;
        PyObject *value = PyObject_GetAttr(ver, s_value);
        Py_DECREF(ver);
        return value;
    }
    return PyObject_GetAttr(v, s_version);
}

/* Function._record for its common case (one output, no mark_dirty); anything else calls it. */
static int record(PyObject *cls, PyObject *ctx, PyObject *args, PyObject *outputs) {
    if (!has(cls, s_record, ref_record) || PyList_GET_SIZE(outputs) != 1)
        goto generic;
    PyObject *dirty = PyObject_GetAttr(ctx, s_dirty);
    if (dirty == NULL)
        return -1;
    int d = PyObject_IsTrue(dirty);
    Py_DECREF(dirty);
    if (d < 0)
        return -1;
    if (d)
        goto generic;

    /* history = History(cls, ctx, args) */
    PyObject *history = NULL;
    PyObject *H = PyDict_GetItemWithError(function_globals, s_History); /* borrowed */
    if (H == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_NameError, "name 'History' is not defined");
        return -1;
    }
    PyObject *stamps = PyDict_GetItemWithError(function_globals, s_stamps); /* borrowed */
    if (H == HistoryT && stamps != NULL && Py_IS_TYPE(stamps, count_type) && PyTuple_CheckExact(args) &&
        plain_constructible(HistoryT, ref_hist_init)) {
        history = new_plain(HistoryT);
        if (history == NULL)
            return -1;
        PyObject *stamp = NULL;
        if (PyObject_SetAttr(history, s_last_fn, cls) < 0 || PyObject_SetAttr(history, s_ctx, ctx) < 0 ||
            PyObject_SetAttr(history, s_inputs, args) < 0 || (stamp = PyIter_Next(stamps)) == NULL ||
            PyObject_SetAttr(history, s_stamp, stamp) < 0) {
            Py_XDECREF(stamp);
            Py_DECREF(history);
            return -1;
        }
        Py_DECREF(stamp);
    } else {
        if (PyErr_Occurred())
            return -1;
        PyObject *hargs[3] = {cls, ctx, args};
        Py_INCREF(H);
        history = PyObject_Vectorcall(H, hargs, 3, NULL);
        Py_DECREF(H);
        if (history == NULL)
            return -1;
    }

    /* the output gets it unless it is not a Variable or was marked non-differentiable */
    PyObject *w = PyList_GET_ITEM(outputs, 0);
    PyObject *nondiff = PyObject_GetAttr(ctx, s_non_differentiable);
    if (nondiff == NULL)
        goto fail;
    int isvar = PyObject_IsInstance(w, Variable);
    int skip = 0;
    if (isvar > 0) {
        skip = PyObject_IsTrue(nondiff);
        if (skip > 0)
            skip = is_one_of(w, nondiff);
    }
    Py_DECREF(nondiff);
    if (isvar < 0 || skip < 0)
        goto fail;
    if (isvar && !skip) {
        PyObject *zero = PyLong_FromLong(0); /* the index from enumerate: the small int 0 */
        if (has((PyObject *)Py_TYPE(w), s_set_history, ref_set_history)) {
            if (PyObject_SetAttr(w, s_history, history) < 0 || PyObject_SetAttr(w, s_output_nr, zero) < 0) {
                Py_DECREF(zero);
                goto fail;
            }
        } else {
            PyObject *margs[4] = {NULL, w, history, zero};
            PyObject *r = PyObject_VectorcallMethod(s_set_history, margs + 1, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            if (r == NULL) {
                Py_DECREF(zero);
                goto fail;
            }
            Py_DECREF(r);
        }
        Py_DECREF(zero);
    }

    /* if ctx._saved: cls._saved_recorded(ctx) */
    PyObject *saved = PyObject_GetAttr(ctx, s_saved);
    if (saved == NULL)
        goto fail;
    int any_saved = PyObject_IsTrue(saved);
    if (any_saved <= 0) {
        Py_DECREF(saved);
        if (any_saved < 0)
            goto fail;
        Py_DECREF(history);
        return 0;
    }
    if (has(cls, s_saved_recorded, ref_saved_recorded)) {
        /* ctx._saved_versions = tuple([v._version if isinstance(v, Variable) else None for v in ctx._saved]) */
        PyObject *seq = PySequence_Fast(saved, "");
        Py_DECREF(saved);
        if (seq == NULL)
            goto fail;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        PyObject *versions = PyTuple_New(n);
        if (versions == NULL) {
            Py_DECREF(seq);
            goto fail;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
            int r = PyObject_IsInstance(v, Variable);
            PyObject *ver = r > 0 ? version_of(v) : r == 0 ? Py_NewRef(Py_None) : NULL;
            if (ver == NULL) {
                Py_DECREF(versions);
                Py_DECREF(seq);
                goto fail;
            }
            PyTuple_SET_ITEM(versions, i, ver);
        }
        Py_DECREF(seq);
        int r = PyObject_SetAttr(ctx, s_saved_versions, versions);
        Py_DECREF(versions);
        if (r < 0)
            goto fail;
    } else {
        Py_DECREF(saved);
        PyObject *margs[3] = {NULL, cls, ctx};
        PyObject *r = PyObject_VectorcallMethod(s_saved_recorded, margs + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
    Py_DECREF(history);
    return 0;
fail:
    Py_DECREF(history);
    return -1;

generic : {
    PyObject *margs[5] = {NULL, cls, ctx, args, outputs};
    PyObject *r = PyObject_VectorcallMethod(s_record, margs + 1, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}
}

#define SMALL 8

PyDoc_STRVAR(apply_doc, "apply($cls, /, *args, **kwargs)\n--\n\n"
                        "Run forward on the inputs' raw values and, if any input needs a gradient, record a History.\n\n"
                        "The fused native apply (torchlight/_native/apply.c): the same steps as the Python\n"
                        "Function.apply in autograd/function.py, in one crossing. See torchlight.autograd.native.");

static PyObject *native_apply(PyObject *module, PyObject *const *stack, Py_ssize_t nargsf, PyObject *kwnames) {
    Py_ssize_t nall = PyVectorcall_NARGS(nargsf);
    if (nall < 1) {
        PyErr_SetString(PyExc_TypeError, "apply() needs the Function class");
        return NULL;
    }
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "torchlight._native_apply.init() was not called");
        return NULL;
    }
    n_calls++;
    PyObject *cls = stack[0];
    PyObject *const *argv = stack + 1;
    Py_ssize_t n = nall - 1;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

    /* grad mode: this thread's list [enabled, level] */
    PyObject *mode = PyObject_GetAttr(grad_state, s_mode);
    if (mode == NULL)
        return NULL;
    if (!PyList_CheckExact(mode) || PyList_GET_SIZE(mode) != 2) {
        Py_DECREF(mode);
        return call_python_apply(stack, nall, kwnames);
    }

    /* kind, needs, raw = _unpack(args) */
    PyObject *kind = NULL; /* borrowed: the type of the first Variable */
    PyObject *needs = PyTuple_New(n);
    PyObject *raw = PyList_New(n);
    PyObject *args = NULL, *ctx = NULL, *out = NULL, *outs = NULL, *outputs = NULL, *result = NULL;
    PyObject *kwargs = NULL, *enabled = NULL, *level = NULL;
    int any_need = 0;
    if (needs == NULL || raw == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = argv[i];
        int r = PyObject_IsInstance(a, Variable);
        if (r < 0)
            goto done;
        if (r) {
            if (kind == NULL)
                kind = (PyObject *)Py_TYPE(a);
            PyObject *h = PyObject_GetAttr(a, s_history);
            if (h == NULL)
                goto done;
            int need = h != Py_None;
            Py_DECREF(h);
            any_need |= need;
            PyTuple_SET_ITEM(needs, i, Py_NewRef(need ? Py_True : Py_False));
            PyObject *v;
            if (Py_IS_TYPE(a, (PyTypeObject *)Tensor) && has(Tensor, s_forward_value, ref_tensor_forward_value))
                v = Py_NewRef(a);
            else if (Py_IS_TYPE(a, (PyTypeObject *)Scalar) && has(Scalar, s_forward_value, ref_scalar_forward_value))
                v = PyObject_GetAttr(a, s_data);
            else
                v = PyObject_CallMethodNoArgs(a, s_forward_value);
            if (v == NULL)
                goto done;
            PyList_SET_ITEM(raw, i, v);
        } else {
            if (!plain_builtin(a)) {
                PyObject *held = NULL;
                if (LOOKUP_ATTR(a, s_value, &held) < 0)
                    goto done;
                if (held != NULL) {
                    int h = PyObject_IsInstance(held, Variable);
                    Py_DECREF(held);
                    if (h < 0)
                        goto done;
                    if (h) { /* an nn.Parameter: the Python apply applies to the Variable it holds */
                        Py_CLEAR(needs);
                        Py_CLEAR(raw);
                        Py_DECREF(mode);
                        return call_python_apply(stack, nall, kwnames);
                    }
                }
            }
            PyTuple_SET_ITEM(needs, i, Py_NewRef(Py_False));
            PyList_SET_ITEM(raw, i, Py_NewRef(a));
        }
    }

    /* ctx = Context(); ctx.needs_input_grad = needs; ctx._fn = cls */
    if (plain_constructible(ContextT, ref_ctx_init))
        ctx = new_plain(ContextT);
    else
        ctx = PyObject_CallNoArgs(ContextT);
    if (ctx == NULL || PyObject_SetAttr(ctx, s_needs_input_grad, needs) < 0 || PyObject_SetAttr(ctx, s_fn, cls) < 0)
        goto done;

    /* forward, with recording and tangents off; the mode restored whatever happens */
    enabled = Py_NewRef(PyList_GET_ITEM(mode, 0));
    level = Py_NewRef(PyList_GET_ITEM(mode, 1));
    PyList_SetItem(mode, 0, Py_NewRef(Py_False));
    PyList_SetItem(mode, 1, Py_NewRef(Py_None));
    int legacy = 0;
    if (has(cls, s_run_forward, ref_run_forward)) {
        /* module 5's _run_forward: forward(ctx, *raw, **kwargs) unless setup_context is overridden */
        PyObject *sc = PyObject_GetAttr(cls, s_setup_context);
        if (sc != NULL) {
            PyObject *dflt = NULL;
            if (LOOKUP_ATTR(sc, s_default, &dflt) >= 0) {
                legacy = dflt == NULL ? 0 : PyObject_IsTrue(dflt);
                Py_XDECREF(dflt);
            } else
                legacy = -1;
            Py_DECREF(sc);
        } else
            legacy = -1;
    }
    if (legacy > 0) {
        PyObject *fwd = PyObject_GetAttr(cls, s_forward);
        if (fwd != NULL) {
            PyObject *small[SMALL + 1];
            Py_ssize_t total = 1 + n + nkw;
            PyObject **fargs = total <= SMALL ? small + 1 : PyMem_Malloc((total + 1) * sizeof(PyObject *));
            if (fargs == NULL) {
                PyErr_NoMemory();
            } else {
                if (total > SMALL)
                    fargs += 1;
                fargs[0] = ctx;
                for (Py_ssize_t i = 0; i < n; i++)
                    fargs[1 + i] = PyList_GET_ITEM(raw, i);
                for (Py_ssize_t i = 0; i < nkw; i++)
                    fargs[1 + n + i] = argv[n + i];
                out = PyObject_Vectorcall(fwd, fargs, (1 + n) | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
                if (total > SMALL)
                    PyMem_Free(fargs - 1);
            }
            Py_DECREF(fwd);
        }
    } else if (legacy == 0) {
        kwargs = kwargs_dict(argv + n, kwnames);
        if (kwargs != NULL) {
            PyObject *margs[5] = {NULL, cls, ctx, raw, kwargs};
            out = PyObject_VectorcallMethod(s_run_forward, margs + 1, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
    }
    /* finally: mode[0], mode[1] = enabled, level */
    if (PyList_GET_SIZE(mode) >= 2) {
        PyList_SetItem(mode, 0, Py_NewRef(enabled));
        PyList_SetItem(mode, 1, Py_NewRef(level));
    } else {
        Py_CLEAR(out);
        PyErr_SetString(PyExc_IndexError, "list assignment index out of range");
    }
    if (out == NULL)
        goto done;

    if (kind == NULL) { /* no Variable among the inputs: plain values in, plain values out */
        result = out;
        out = NULL;
        goto done;
    }

    /* the arguments as the tuple the Python apply receives */
    args = PyTuple_New(n);
    if (args == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(args, i, Py_NewRef(argv[i]));

    int multiple = PyTuple_Check(out);
    if (multiple)
        outs = PyTuple_CheckExact(out) ? Py_NewRef(out) : PySequence_Tuple(out);
    else
        outs = PyTuple_Pack(1, out);
    if (outs == NULL)
        goto done;

    /* if ctx._dirty: cls._check_dirty(ctx, raw, out if multiple else (out,)) */
    PyObject *dirty = PyObject_GetAttr(ctx, s_dirty);
    if (dirty == NULL)
        goto done;
    int has_dirty = PyObject_IsTrue(dirty);
    if (has_dirty > 0) {
        PyObject *outarg = multiple ? out : outs;
        PyObject *margs[5] = {NULL, cls, ctx, raw, outarg};
        PyObject *r = PyObject_VectorcallMethod(s_check_dirty, margs + 1, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        Py_DECREF(dirty);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
        dirty = PyObject_GetAttr(ctx, s_dirty); /* _wrap(..., ctx._dirty): read again, as there */
        if (dirty == NULL)
            goto done;
        has_dirty = PyObject_IsTrue(dirty);
    }
    if (has_dirty < 0) {
        Py_DECREF(dirty);
        goto done;
    }

    /* outputs = _wrap(outs, args, kind, ctx._dirty) */
    Py_ssize_t nout = PyTuple_GET_SIZE(outs);
    outputs = PyList_New(nout);
    if (outputs == NULL) {
        Py_DECREF(dirty);
        goto done;
    }
    int tensor_wrap = kind == Tensor && has(Tensor, s_wrap_output, ref_tensor_wrap_output);
    for (Py_ssize_t i = 0; i < nout; i++) {
        PyObject *o = PyTuple_GET_ITEM(outs, i);
        PyObject *w;
        if (tensor_wrap) {
            int r = PyObject_IsInstance(o, Tensor);
            w = r > 0 ? Py_NewRef(o) : r == 0 ? Py_NewRef(Py_None) : NULL;
        } else {
            PyObject *margs[3] = {NULL, kind, o};
            w = PyObject_VectorcallMethod(s_wrap_output, margs + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
        if (w == NULL) {
            Py_DECREF(dirty);
            goto done;
        }
        if (w == Py_None) {
            Py_DECREF(w);
            w = Py_NewRef(o);
        } else if (in_array(w, argv, n)) {
            int keep = 0;
            if (has_dirty) {
                keep = is_one_of(w, dirty);
                if (keep < 0) {
                    Py_DECREF(w);
                    Py_DECREF(dirty);
                    goto done;
                }
            }
            if (!keep) { /* forward returned an input unchanged: the output is a new node */
                PyObject *alias = PyObject_CallMethodNoArgs(w, s_alias);
                Py_DECREF(w);
                if (alias == NULL) {
                    Py_DECREF(dirty);
                    goto done;
                }
                w = alias;
            }
        }
        PyList_SET_ITEM(outputs, i, w);
    }
    Py_DECREF(dirty);

    int on = PyObject_IsTrue(enabled);
    if (on < 0)
        goto done;
    if (on && any_need && record(cls, ctx, args, outputs) < 0)
        goto done;
    if (level != Py_None) { /* inside forward_ad.dual_level() (module 5) */
        PyObject *margs[6] = {NULL, cls, ctx, args, outputs, level};
        PyObject *r = PyObject_VectorcallMethod(s_forward_mode, margs + 1, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    result = multiple ? PyList_AsTuple(outputs) : Py_NewRef(PyList_GET_ITEM(outputs, 0));

done:
    Py_DECREF(mode);
    Py_XDECREF(needs);
    Py_XDECREF(raw);
    Py_XDECREF(args);
    Py_XDECREF(ctx);
    Py_XDECREF(out);
    Py_XDECREF(outs);
    Py_XDECREF(outputs);
    Py_XDECREF(kwargs);
    Py_XDECREF(enabled);
    Py_XDECREF(level);
    return result;
}

static PyObject *get_ref(PyObject *refs, const char *key, int required) {
    PyObject *v = PyDict_GetItemString(refs, key); /* borrowed */
    if (v == NULL) {
        if (required)
            PyErr_Format(PyExc_KeyError, "torchlight._native_apply.init: missing %s", key);
        return NULL;
    }
    return Py_NewRef(v);
}

PyDoc_STRVAR(init_doc, "init(refs: dict) -> None\n\n"
                       "Hand over the classes and reference methods the native apply checks against\n"
                       "(torchlight/autograd/native.py calls it once).");

static PyObject *native_init(PyObject *module, PyObject *refs) {
    if (!PyDict_Check(refs)) {
        PyErr_SetString(PyExc_TypeError, "init() takes a dict");
        return NULL;
    }
    ready = 0;
#define REQ(var, key)                                 \
    Py_XDECREF(var);                                  \
    if (!(var = get_ref(refs, key, 1)))               \
        return NULL;
#define OPT(var, key)   \
    Py_XDECREF(var);    \
    var = get_ref(refs, key, 0);
    REQ(Variable, "Variable") REQ(ContextT, "Context") REQ(HistoryT, "History") REQ(Tensor, "Tensor")
    REQ(Scalar, "Scalar") REQ(grad_state, "grad_state") REQ(function_globals, "function_globals")
    REQ(py_apply, "python_apply")
    OPT(ref_ctx_init, "Context.__init__") OPT(ref_hist_init, "History.__init__")
    OPT(ref_run_forward, "Function._run_forward") OPT(ref_record, "Function._record")
    OPT(ref_saved_recorded, "Function._saved_recorded") OPT(ref_set_history, "Variable._set_history")
    OPT(ref_tensor_forward_value, "Tensor._forward_value") OPT(ref_scalar_forward_value, "Scalar._forward_value")
    OPT(ref_tensor_wrap_output, "Tensor._wrap_output") OPT(ref_tensor_version, "Tensor._version")
#undef REQ
#undef OPT
    PyObject *ct = get_ref(refs, "count_type", 1);
    if (ct == NULL)
        return NULL;
    Py_XDECREF(count_type);
    count_type = (PyTypeObject *)ct;
    if (!PyDict_Check(function_globals)) {
        PyErr_SetString(PyExc_TypeError, "init(): function_globals must be a dict");
        return NULL;
    }
    PyObject *types[] = {Variable, ContextT, HistoryT, Tensor, Scalar, ct};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (!PyType_Check(types[i])) {
            PyErr_SetString(PyExc_TypeError, "init(): expected classes");
            return NULL;
        }
    }
    /* The inlined _forward_value reads nothing an instance could override: no instance __dict__. */
    if (((PyTypeObject *)Tensor)->tp_dictoffset != 0)
        Py_CLEAR(ref_tensor_forward_value);
    if (((PyTypeObject *)Scalar)->tp_dictoffset != 0)
        Py_CLEAR(ref_scalar_forward_value);
    Py_XDECREF(ref_object_new);
    ref_object_new = Py_XNewRef(_PyType_Lookup(&PyBaseObject_Type, s_new));
    ready = 1;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(stats_doc, "stats() -> (calls, fallbacks)\n\n"
                        "How many times the native apply ran, and how many of those handed the whole call to the\n"
                        "Python apply (a Parameter among the arguments, an unusual grad-mode list).");

static PyObject *native_stats(PyObject *module, PyObject *unused) {
    return Py_BuildValue("(KK)", n_calls, n_fallbacks);
}

static PyMethodDef methods[] = {
    {"apply", (PyCFunction)(void (*)(void))native_apply, METH_FASTCALL | METH_KEYWORDS, apply_doc},
    {"init", native_init, METH_O, init_doc},
    {"stats", native_stats, METH_NOARGS, stats_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_native_apply",
    "The fused native Function.apply and the fast kernels' launch (module 3): torchlight.autograd.native.", -1, methods,
    NULL, NULL, NULL, NULL,
};

int torchlight_add_launch(PyObject *module); /* launch.c: the fast backend's kernel launch */
int torchlight_add_walk(PyObject *module);   /* walk.c: the backward walk's helpers */

PyMODINIT_FUNC PyInit__native_apply(void) {
    if (intern_names() < 0)
        return NULL;
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&moduledef);
    if (module != NULL && (torchlight_add_launch(module) < 0 || torchlight_add_walk(module) < 0))
        Py_CLEAR(module);
    return module;
}
