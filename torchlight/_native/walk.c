/* Module 3: the backward walk's helpers at each node, in C (torchlight._native_apply).
 *
 * At every node the walk (autograd/graph.py) asks for the node's inputs twice (History.input_nodes,
 * once through Variable.parents while sorting, once in History.chain_rule) and runs the Function's
 * backward through History.backward_results, which checks what it returns (History._check_result).
 * Those are module 1's helpers around the code a student writes (chain_rule, topological_sort and
 * backpropagate stay Python, as written); here they take a microsecond or two of interpreted code
 * per node. autograd/native.py registers these in their place (all three are extension points),
 * under the same switch as the fused apply. Each does the Python's steps for the common case and
 * calls the Python for anything else:
 *
 *   History.input_nodes()     -> for each input: None unless it is a Variable with a history; else
 *                                its node, which is x itself unless module 5's _recorded_node has
 *                                something to do (x's History newer than this one: changed in place
 *                                since; or made by a view): then that method is called
 *   History.backward_results  -> last_fn.backward(ctx, *grads), as a tuple, and when backward gave
 *                                one gradient per input, each None or for a Variable, that tuple;
 *                                else (several outputs with some missing, or a result to check
 *                                further) the Python methods
 *   Variable.parents          -> [n for n in history.input_nodes() if n is not None]
 *
 * tests/module3/test_native_apply.py pins the source of each Python method these stand for, and
 * runs its battery (graphs, in-place changes, views, several outputs, errors) both ways.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *VariableT;             /* autograd.variable.Variable */
static PyObject *ref_recorded_identity; /* module 1's History._recorded_node (returns x) */
static PyObject *ref_recorded_inplace;  /* module 5's (inplace_tracking._InplaceHistory._recorded_node) */
static PyObject *ref_check_result;      /* History._check_result */
static PyObject *py_backward_results;   /* the Python History.backward_results: what the common case leaves */
static int walk_ready = 0;

static PyObject *s_inputs, *s_history, *s_stamp, *s_last_fn, *s_returns_view, *s_recorded_node, *s_output_meta,
    *s_backward, *s_ctx, *s_check_result, *s_input_nodes;

/* The node input x stands for, or NULL with an exception. (x is a Variable with a history h.) */
static PyObject *node_of(PyObject *self, PyObject *x, PyObject *h, PyObject *recorded, PyObject *self_stamp) {
    if (recorded == ref_recorded_identity)
        return Py_NewRef(x);
    if (recorded == ref_recorded_inplace && self_stamp != NULL) {
        /* module 5: x unless h.stamp > self.stamp, or h.last_fn is a view's Function */
        PyObject *stamp = PyObject_GetAttr(h, s_stamp);
        if (stamp == NULL)
            return NULL;
        int newer = PyObject_RichCompareBool(stamp, self_stamp, Py_GT);
        Py_DECREF(stamp);
        if (newer < 0)
            return NULL;
        if (!newer) {
            PyObject *fn = PyObject_GetAttr(h, s_last_fn);
            if (fn == NULL)
                return NULL;
            int view = 0;
            if (fn != Py_None) {
                PyObject *rv = PyObject_GetAttr(fn, s_returns_view);
                view = rv == NULL ? -1 : PyObject_IsTrue(rv);
                Py_XDECREF(rv);
            }
            Py_DECREF(fn);
            if (view < 0)
                return NULL;
            if (!view)
                return Py_NewRef(x);
        }
    }
    PyObject *margs[3] = {NULL, self, x};
    return PyObject_VectorcallMethod(s_recorded_node, margs + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static PyObject *input_nodes_impl(PyObject *self) {
    PyObject *inputs = PyObject_GetAttr(self, s_inputs);
    if (inputs == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(inputs, "History.inputs must be a sequence");
    Py_DECREF(inputs);
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *nodes = PyList_New(n);
    PyObject *self_stamp = NULL;
    PyObject *recorded = _PyType_Lookup(Py_TYPE(self), s_recorded_node); /* borrowed */
    if (nodes == NULL)
        goto fail;
    if (recorded == ref_recorded_inplace && (self_stamp = PyObject_GetAttr(self, s_stamp)) == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *node = NULL;
        int isvar = PyObject_IsInstance(x, VariableT);
        if (isvar < 0)
            goto fail;
        if (isvar) {
            PyObject *h = PyObject_GetAttr(x, s_history);
            if (h == NULL)
                goto fail;
            node = h == Py_None ? Py_NewRef(Py_None) : node_of(self, x, h, recorded, self_stamp);
            Py_DECREF(h);
            if (node == NULL)
                goto fail;
        } else
            node = Py_NewRef(Py_None);
        PyList_SET_ITEM(nodes, i, node);
    }
    Py_DECREF(seq);
    Py_XDECREF(self_stamp);
    return nodes;
fail:
    Py_DECREF(seq);
    Py_XDECREF(nodes);
    Py_XDECREF(self_stamp);
    return NULL;
}

static int not_ready(void) {
    if (!walk_ready)
        PyErr_SetString(PyExc_RuntimeError, "torchlight._native_apply.walk_init() was not called");
    return !walk_ready;
}

static PyObject *walk_input_nodes(PyObject *module, PyObject *self) {
    if (not_ready())
        return NULL;
    return input_nodes_impl(self);
}

/* History.backward_results(self, grads) */
static PyObject *walk_backward_results(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!walk_ready || nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "backward_results(self, grads): two arguments, after walk_init()");
        return NULL;
    }
    PyObject *self = args[0], *grads = args[1];
    PyObject *meta = PyObject_GetAttr(self, s_output_meta);
    if (meta == NULL)
        return NULL;
    int several = PyObject_IsTrue(meta);
    Py_DECREF(meta);
    if (several < 0)
        return NULL;
    if (several || !PyList_CheckExact(grads)) /* outputs that may lack a gradient: the Python method */
        return PyObject_Vectorcall(py_backward_results, args, 2, NULL);

    PyObject *fn = PyObject_GetAttr(self, s_last_fn);
    if (fn == NULL)
        return NULL;
    PyObject *backward = PyObject_GetAttr(fn, s_backward);
    Py_DECREF(fn);
    if (backward == NULL)
        return NULL;
    PyObject *ctx = PyObject_GetAttr(self, s_ctx);
    if (ctx == NULL) {
        Py_DECREF(backward);
        return NULL;
    }
    Py_ssize_t ng = PyList_GET_SIZE(grads);
    PyObject *small[8];
    PyObject **bargs = ng + 1 <= 8 ? small : PyMem_Malloc((ng + 1) * sizeof(PyObject *));
    PyObject *result = NULL;
    if (bargs == NULL) {
        PyErr_NoMemory();
    } else {
        bargs[0] = ctx;
        for (Py_ssize_t i = 0; i < ng; i++)
            bargs[1 + i] = PyList_GET_ITEM(grads, i);
        result = PyObject_Vectorcall(backward, bargs, ng + 1, NULL);
        if (bargs != small)
            PyMem_Free(bargs);
    }
    Py_DECREF(backward);
    Py_DECREF(ctx);
    if (result == NULL)
        return NULL;
    /* self._check_result(result if isinstance(result, tuple) else (result,)) */
    if (!PyTuple_Check(result))
        Py_SETREF(result, PyTuple_Pack(1, result));
    if (result == NULL)
        return NULL;
    if (_PyType_Lookup(Py_TYPE(self), s_check_result) == ref_check_result) {
        PyObject *inputs = PyObject_GetAttr(self, s_inputs);
        if (inputs == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        int fine = PyTuple_CheckExact(inputs) && PyTuple_GET_SIZE(inputs) == PyTuple_GET_SIZE(result);
        for (Py_ssize_t i = 0; fine && i < PyTuple_GET_SIZE(inputs); i++) {
            if (PyTuple_GET_ITEM(result, i) != Py_None) {
                int v = PyObject_IsInstance(PyTuple_GET_ITEM(inputs, i), VariableT);
                if (v < 0) {
                    Py_DECREF(inputs);
                    Py_DECREF(result);
                    return NULL;
                }
                fine = v;
            }
        }
        Py_DECREF(inputs);
        if (fine)
            return result; /* what _check_result returns when all is well: the tuple itself */
    }
    PyObject *margs[3] = {NULL, self, result};
    PyObject *checked =
        PyObject_VectorcallMethod(s_check_result, margs + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(result);
    return checked;
}

/* Variable.parents (the property's getter) */
static PyObject *walk_parents(PyObject *module, PyObject *self) {
    if (not_ready())
        return NULL;
    PyObject *h = PyObject_GetAttr(self, s_history);
    if (h == NULL)
        return NULL;
    if (h == Py_None) {
        Py_DECREF(h);
        return PyList_New(0);
    }
    PyObject *nodes = PyObject_CallMethodNoArgs(h, s_input_nodes);
    Py_DECREF(h);
    if (nodes == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(nodes, "input_nodes() must return a sequence");
    Py_DECREF(nodes);
    if (seq == NULL)
        return NULL;
    PyObject *parents = PyList_New(0);
    for (Py_ssize_t i = 0; parents != NULL && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (x != Py_None && PyList_Append(parents, x) < 0)
            Py_CLEAR(parents);
    }
    Py_DECREF(seq);
    return parents;
}

static PyObject *walk_init(PyObject *module, PyObject *refs) {
    if (!PyDict_Check(refs)) {
        PyErr_SetString(PyExc_TypeError, "walk_init() takes a dict");
        return NULL;
    }
    static const char *keys[] = {"Variable", "History._recorded_node (module 1)", "History._recorded_node (module 5)",
                                 "History._check_result", "History.backward_results"};
    PyObject **slots[] = {&VariableT, &ref_recorded_identity, &ref_recorded_inplace, &ref_check_result,
                          &py_backward_results};
    walk_ready = 0;
    for (int i = 0; i < 5; i++) {
        PyObject *v = PyDict_GetItemString(refs, keys[i]); /* borrowed */
        if (v == NULL && (i == 0 || i == 4)) {
            PyErr_Format(PyExc_KeyError, "walk_init: missing %s", keys[i]);
            return NULL;
        }
        Py_XSETREF(*slots[i], Py_XNewRef(v));
    }
    walk_ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef walk_functions[] = {
    {"walk_init", walk_init, METH_O,
     "walk_init(refs: dict) -> None: the classes and reference methods the walk's helpers check against "
     "(autograd/native.py)."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef method_defs[] = {
    {"input_nodes", walk_input_nodes, METH_O,
     "input_nodes($self, /)\n--\n\nFor each input, the graph node it stands for (None for a constant or a plain "
     "number): History.input_nodes in C (torchlight/_native/walk.c)."},
    {"backward_results", (PyCFunction)(void (*)(void))walk_backward_results, METH_FASTCALL,
     "backward_results($self, grads, /)\n--\n\nThe Function's backward at this node: one gradient per input, "
     "checked: History.backward_results in C (torchlight/_native/walk.c)."},
    {"parents", walk_parents, METH_O,
     "parents($self, /)\n--\n\nThe non-constant inputs of the Function that produced this value: "
     "Variable.parents in C (torchlight/_native/walk.c)."},
};

/* Called by the module's init (apply.c): the three helpers as methods (bound like functions). */
int torchlight_add_walk(PyObject *module) {
#define I(var, text)                                 \
    if (!(var = PyUnicode_InternFromString(text))) \
        return -1;
    I(s_inputs, "inputs") I(s_history, "history") I(s_stamp, "stamp") I(s_last_fn, "last_fn")
    I(s_returns_view, "returns_view") I(s_recorded_node, "_recorded_node") I(s_output_meta, "output_meta")
    I(s_backward, "backward") I(s_ctx, "ctx") I(s_check_result, "_check_result") I(s_input_nodes, "input_nodes")
#undef I
    for (size_t i = 0; i < sizeof(method_defs) / sizeof(method_defs[0]); i++) {
        PyObject *fn = PyCFunction_NewEx(&method_defs[i], NULL, NULL);
        if (fn == NULL)
            return -1;
        /* parents is a property's getter (called with self); the other two are methods */
        PyObject *m = i == 2 ? Py_NewRef(fn) : PyInstanceMethod_New(fn);
        Py_DECREF(fn);
        if (m == NULL || PyModule_AddObject(module, method_defs[i].ml_name, m) < 0) {
            Py_XDECREF(m);
            return -1;
        }
    }
    return PyModule_AddFunctions(module, walk_functions);
}
