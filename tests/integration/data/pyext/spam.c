/* A tiny CPython extension: built into a wheel inside a foreign root
 * (tests/integration/test_root_wheel.sh). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject* spam_add(PyObject* self, PyObject* args) {
    long a, b;
    (void)self;
    if (!PyArg_ParseTuple(args, "ll", &a, &b))
        return NULL;
    return PyLong_FromLong(a + b);
}

static PyObject* spam_machine(PyObject* self, PyObject* args) {
    (void)self;
    (void)args;
#if defined(__aarch64__)
    return PyUnicode_FromString("aarch64");
#elif defined(__powerpc64__)
    return PyUnicode_FromString("ppc64le");
#elif defined(__s390x__)
    return PyUnicode_FromString("s390x");
#else
    return PyUnicode_FromString("other");
#endif
}

static PyMethodDef spam_methods[] = {
    {"add", spam_add, METH_VARARGS, "Add two integers."},
    {"machine", spam_machine, METH_NOARGS, "The arch this module was compiled for."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef spam_module = {
    PyModuleDef_HEAD_INIT, "spam", NULL, -1, spam_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_spam(void) {
    return PyModule_Create(&spam_module);
}
