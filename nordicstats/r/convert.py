"""Explicit, NA-correct conversion between R objects and Python objects.

rpy2's default pandas conversion corrupts missing values (integer ``NA``
becomes -2147483648, character ``NA`` the text ``"NA_character_"``, logicals
strings), so the bridge converts column by column with its own rules and never
calls ``pandas2ri``.  Every rule below is its own inverse, so an R
``data.frame`` sent to Python and back is ``identical()`` to the original.

================================  ==============================================  =================
R                                 Python                                          missing value
================================  ==============================================  =================
double                            ``numpy.ndarray`` float64                       NaN (R's NA bit
                                                                                  pattern is kept)
integer                           ``pandas`` ``Int64`` array                      ``pd.NA``
logical                           ``pandas`` ``boolean`` array                    ``pd.NA``
character                         ``pandas`` ``str`` array                        NaN
factor                            unordered ``pandas.Categorical``                code -1
ordered factor                    ordered ``pandas.Categorical``                  code -1
data.frame                        ``pandas.DataFrame`` (column by column)         as above
matrix                            float ``numpy.ndarray``; a DataFrame flagged
                                  ``attrs["r_matrix"]`` if it has column
                                  names (it goes back as a matrix)
named vector                      ``pandas.Series`` indexed by the names
list                              ``dict`` if named, else ``list``
length-1 vector, no attributes    Python scalar (``None`` for NA); used for
                                  function arguments
NULL                              ``None``
================================  ==============================================  =================

Row names: R's automatic row names become a ``RangeIndex`` (and back);
integer row names an integer index with the same values; character row names
a string index.  Attributes other than names, dim, dimnames, levels, class and
row.names are not carried over; classed vectors other than factors (Date,
POSIXct, I()) are refused with a TypeError naming them.  Python integers
outside R's 32-bit range become doubles with a warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from nordicstats.r._rpy2 import ri

__all__ = ["py_to_r", "r_to_py", "dataframe_to_r", "dataframe_from_r"]

#: ``DataFrame.attrs`` flag of frames made from R matrices (they go back as matrices).
R_MATRIX = "r_matrix"

_R_INT_NA = np.iinfo(np.int32).min
_R_INT_MAX = np.iinfo(np.int32).max


# ----------------------------------------------------------------------------- R -> Python
def r_to_py(x, scalars=True):
    """Convert an R object (``rpy2.rinterface`` Sexp) to a Python object.

    Parameters
    ----------
    x : rpy2.rinterface.Sexp
        The R object.
    scalars : bool, default=True
        Turn length-1 vectors without attributes into Python scalars (how
        function arguments arrive: ``C = 1`` becomes ``1.0``).

    Returns
    -------
    object
        See the module docstring for the mapping.

    Raises
    ------
    TypeError
        An R type the bridge does not convert (environments, functions, ...).
    """
    if x is ri.NULL or x.typeof == ri.RTYPES.NILSXP:
        return None
    rclass = tuple(x.rclass)
    if "data.frame" in rclass:
        return dataframe_from_r(x)
    if x.typeof == ri.RTYPES.VECSXP:
        return _list_from_r(x)
    if x.typeof not in _ATOMIC_FROM_R:
        raise TypeError(f"cannot convert an R object of type {x.typeof.name} "
                        f"(class {list(rclass)}) to Python.")
    _check_plain(x, rclass, "the R object")
    values = _vector_from_r(x, rclass)
    attrs = set(x.list_attrs())
    if "dim" in attrs:
        return _matrix_from_r(x, values)
    if "names" in attrs:
        names = [str(n) for n in x.names]
        return pd.Series(values, index=pd.Index(names), copy=False)
    if scalars and len(x) == 1 and not attrs:
        return _scalar(values)
    return values


def dataframe_from_r(df):
    """Convert an R ``data.frame`` to a ``pandas.DataFrame`` column by column."""
    names = [str(n) for n in df.names] if df.names is not ri.NULL else []
    columns = {}
    for j, name in enumerate(names):
        col = df[j]
        rclass = tuple(col.rclass)
        if col.typeof not in _ATOMIC_FROM_R or "dim" in col.list_attrs():
            raise TypeError(_unsupported(f"data.frame column '{name}'", rclass, col))
        _check_plain(col, rclass, f"data.frame column '{name}'")
        columns[j] = _vector_from_r(col, rclass)
    n = _r_nrow(df)
    out = pd.DataFrame(columns, index=_index_from_r(df, n))
    out.columns = pd.Index(names)
    return out


def _check_plain(x, rclass, what):
    """Only factors may carry a class: Date, POSIXct, AsIs, ... are refused."""
    if "class" in x.list_attrs() and rclass not in (("factor",), ("ordered", "factor")):
        raise TypeError(_unsupported(what, rclass, x))


def _unsupported(what, rclass, x):
    return (f"{what} has class {list(rclass)} (type {x.typeof.name}); the bridge converts "
            "numeric, integer, logical, character, factor and ordered-factor data. Convert "
            "it first (e.g. as.character() or as.numeric()).")


def _vector_from_r(x, rclass):
    kind = x.typeof
    if kind == ri.RTYPES.INTSXP and "factor" in rclass:
        codes = _buffer(x, np.int32).astype(np.int64) - 1
        codes[codes == _R_INT_NA - 1] = -1
        levels = [str(v) for v in x.do_slot("levels")]
        return pd.Categorical.from_codes(codes, categories=pd.Index(levels),
                                         ordered="ordered" in rclass)
    if kind == ri.RTYPES.REALSXP:
        return _buffer(x, np.float64).copy()
    if kind == ri.RTYPES.INTSXP:
        raw = _buffer(x, np.int32)
        return pd.arrays.IntegerArray(raw.astype(np.int64), raw == _R_INT_NA)
    if kind == ri.RTYPES.LGLSXP:
        raw = _buffer(x, np.int32)
        return pd.arrays.BooleanArray(raw == 1, raw == _R_INT_NA)
    if kind == ri.RTYPES.STRSXP:
        return pd.array([None if v is ri.NA_Character else v for v in x], dtype="str")
    raise TypeError(f"cannot convert an R vector of type {kind.name} to Python.")


def _buffer(x, dtype):
    """The data of an atomic R vector as a flat numpy view (storage order)."""
    return np.asarray(x.memoryview()).reshape(-1, order="F").view(dtype)


def _matrix_from_r(x, values):
    dim = list(x.do_slot("dim"))
    if len(dim) != 2:
        raise TypeError(f"only 2-D R arrays convert to Python; got dim {dim}.")
    if isinstance(values, pd.api.extensions.ExtensionArray):
        values = values.to_numpy(dtype=float, na_value=np.nan) \
            if not isinstance(values.dtype, pd.StringDtype) else values.to_numpy(dtype=object)
    arr = np.asarray(values).reshape(dim, order="F")
    dimnames = x.do_slot("dimnames") if "dimnames" in x.list_attrs() else None
    if dimnames is None or dimnames[1] is ri.NULL:
        return arr
    columns = pd.Index([str(c) for c in dimnames[1]])
    index = (pd.RangeIndex(dim[0]) if dimnames[0] is ri.NULL
             else pd.Index([str(r) for r in dimnames[0]]))
    out = pd.DataFrame(arr, index=index, columns=columns, copy=True)
    out.attrs[R_MATRIX] = True
    return out


def _list_from_r(x):
    items = [r_to_py(x[i], scalars=True) for i in range(len(x))]
    if x.names is ri.NULL:
        return items
    return {str(name): item for name, item in zip(x.names, items, strict=True)}


def _scalar(values):
    value = values[0]
    if value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(values, pd.Categorical):
        return value
    return value.item() if hasattr(value, "item") else value


def _r_nrow(df):
    info = ri.baseenv[".row_names_info"](df, ri.IntSexpVector([2]))
    return int(info[0])


def _index_from_r(df, n):
    automatic = ri.baseenv[".row_names_info"](df, ri.IntSexpVector([1]))[0] < 0
    if automatic:
        return pd.RangeIndex(n)
    rn = df.do_slot("row.names")
    if rn.typeof == ri.RTYPES.INTSXP:
        return pd.Index(_buffer(rn, np.int32).astype(np.int64))
    return pd.Index([str(v) for v in rn])


_ATOMIC_FROM_R = {ri.RTYPES.REALSXP, ri.RTYPES.INTSXP, ri.RTYPES.LGLSXP, ri.RTYPES.STRSXP}


# ----------------------------------------------------------------------------- Python -> R
def py_to_r(obj, name="value"):
    """Convert a Python object to an R object (``rpy2.rinterface`` Sexp).

    Parameters
    ----------
    obj : object
        ``None``, a scalar, ``numpy`` array (1-D or 2-D), ``pandas`` Series,
        DataFrame, Categorical or extension array, ``dict`` (named list),
        ``list``/``tuple`` (unnamed list), or an R object (returned as is).
    name : str
        Used in error messages.

    Returns
    -------
    rpy2.rinterface.Sexp

    Raises
    ------
    TypeError
        An object the bridge does not convert; the message names it.
    """
    if isinstance(obj, ri.Sexp):
        return obj
    if obj is None:
        return ri.NULL
    if isinstance(obj, pd.DataFrame):
        return frame_to_matrix(obj, name) if obj.attrs.get(R_MATRIX) else dataframe_to_r(obj)
    if isinstance(obj, dict):
        return _named_list(obj, name)
    if isinstance(obj, (list, tuple)):
        return ri.ListSexpVector([py_to_r(v, f"{name}[{i}]") for i, v in enumerate(obj)])
    if isinstance(obj, pd.Series):
        vec = _vector_to_r(_values(obj), name)
        if not _is_default_index(obj.index):
            vec.do_slot_assign("names", ri.StrSexpVector([str(i) for i in obj.index]))
        return vec
    if isinstance(obj, np.ndarray) and obj.ndim == 2:
        return _matrix_to_r(obj, None, None, name)
    if isinstance(obj, (np.ndarray, pd.api.extensions.ExtensionArray, pd.Index)):
        return _vector_to_r(obj, name)
    if isinstance(obj, (bool, int, float, str, np.generic)) or obj is pd.NA:
        return _scalar_to_r(obj, name)
    raise TypeError(f"cannot convert {name} of Python type {type(obj).__name__} to R.")


def dataframe_to_r(df):
    """Convert a ``pandas.DataFrame`` to an R ``data.frame`` column by column."""
    columns = [_vector_to_r(_values(df.iloc[:, j]), f"column '{df.columns[j]}'")
               for j in range(df.shape[1])]
    out = ri.ListSexpVector(columns)
    out.do_slot_assign("names", ri.StrSexpVector([str(c) for c in df.columns]))
    out.do_slot_assign("row.names", _row_names_to_r(df.index))
    out.rclass = ri.StrSexpVector(["data.frame"])
    return out


def frame_to_matrix(df, name="value"):
    """Convert a numeric DataFrame to an R matrix keeping row and column names."""
    return _matrix_to_r(df.to_numpy(), df.index, df.columns, name)


def _values(series):
    """A Series' data: the extension array, or the plain numpy array (bits kept)."""
    if isinstance(series.dtype, pd.api.extensions.ExtensionDtype):
        return series.array
    return series.to_numpy(copy=False)


def _matrix_to_r(arr, index, columns, name):
    flat = np.asarray(arr).ravel(order="F")
    vec = _vector_to_r(flat, name)
    vec.do_slot_assign("dim", ri.IntSexpVector(list(arr.shape)))
    if columns is not None:
        rows = ri.NULL if index is None or _is_default_index(index) else \
            ri.StrSexpVector([str(i) for i in index])
        vec.do_slot_assign("dimnames", ri.ListSexpVector(
            [rows, ri.StrSexpVector([str(c) for c in columns])]))
    return vec


def _named_list(obj, name):
    items = [py_to_r(v, f"{name}${k}") for k, v in obj.items()]
    out = ri.ListSexpVector(items)
    out.do_slot_assign("names", ri.StrSexpVector([str(k) for k in obj]))
    return out


def _vector_to_r(values, name):
    if isinstance(values, pd.Index):
        values = values.array
    if isinstance(values, pd.Categorical) or isinstance(values.dtype, pd.CategoricalDtype):
        return _factor_to_r(pd.Categorical(values))
    dtype = values.dtype
    kind = getattr(dtype, "kind", "O")
    if pd.api.types.is_bool_dtype(dtype):
        return _logical_to_r(values)
    if pd.api.types.is_integer_dtype(dtype):
        return _integer_to_r(values, name)
    if pd.api.types.is_float_dtype(dtype):
        return _double_to_r(values)
    if pd.api.types.is_string_dtype(dtype) or kind == "O":
        return _object_to_r(values, name)
    raise TypeError(
        f"cannot convert {name} of dtype {dtype} to R; the bridge converts numbers, booleans, "
        "strings and categoricals."
    )


def _data_and_mask(values, dtype, fill):
    """Plain numpy data and the missing-value mask of an array (masked or not)."""
    if isinstance(values, np.ndarray):
        return np.asarray(values, dtype=dtype), np.zeros(values.shape[0], dtype=bool)
    mask = np.asarray(pd.isna(values), dtype=bool)
    return np.asarray(values.to_numpy(dtype=dtype, na_value=fill), dtype=dtype), mask


def _double_to_r(values):
    if isinstance(values, np.ndarray):
        arr = np.ascontiguousarray(values, dtype=np.float64)   # NaN payloads kept
    else:
        data, mask = _data_and_mask(values, np.float64, np.nan)
        arr = np.where(mask, _R_NA_REAL, data)
    return ri.FloatSexpVector.from_memoryview(memoryview(np.ascontiguousarray(arr)))


def _integer_to_r(values, name):
    data, mask = _data_and_mask(values, np.int64, 0)
    present = data[~mask]
    if present.size and (present.min() <= _R_INT_NA or present.max() > _R_INT_MAX):
        warnings.warn(f"{name} has integers outside R's 32-bit integer range; "
                      "sent to R as doubles.", stacklevel=3)
        return _double_to_r(pd.array(np.where(mask, None, data), dtype="Float64"))
    out = np.where(mask, _R_INT_NA, data).astype(np.int32)
    return ri.IntSexpVector.from_memoryview(memoryview(out))


def _logical_to_r(values):
    data, mask = _data_and_mask(values, bool, False)
    return ri.BoolSexpVector([ri.NA_Logical if m else bool(t)
                              for t, m in zip(data.tolist(), mask.tolist(), strict=True)])


def _scalar_to_r(obj, name):
    if obj is pd.NA:
        return ri.BoolSexpVector([ri.NA_Logical])
    if isinstance(obj, str):
        return ri.StrSexpVector([obj])
    return _vector_to_r(np.asarray([obj]), name)


def _object_to_r(values, name):
    arr = np.asarray(values, dtype=object)
    mask = np.asarray(pd.isna(arr))
    present = arr[~mask]
    inferred = pd.api.types.infer_dtype(present, skipna=True) if present.size else "empty"
    if inferred in ("string", "empty"):
        return ri.StrSexpVector([ri.NA_Character if m else v
                                 for v, m in zip(arr.tolist(), mask.tolist(), strict=True)])
    if inferred == "boolean":
        return _logical_to_r(pd.array(np.where(mask, None, arr), dtype="boolean"))
    if inferred == "integer":
        return _integer_to_r(pd.array(np.where(mask, None, arr), dtype="Int64"), name)
    if inferred in ("floating", "mixed-integer-float", "decimal"):
        return _double_to_r(np.where(mask, np.nan, arr).astype(np.float64))
    raise TypeError(
        f"cannot convert {name} to R: it holds Python objects of mixed or unsupported type "
        f"({inferred}). Convert it to numbers, strings or a Categorical first."
    )


def _factor_to_r(cat):
    codes = np.asarray(cat.codes, dtype=np.int64)
    out = np.where(codes < 0, _R_INT_NA, codes + 1).astype(np.int32)
    vec = ri.IntSexpVector.from_memoryview(memoryview(out))
    vec.do_slot_assign("levels", ri.StrSexpVector([str(c) for c in cat.categories]))
    vec.rclass = ri.StrSexpVector(["ordered", "factor"] if cat.ordered else ["factor"])
    return vec


def _row_names_to_r(index):
    if _is_default_index(index):
        return ri.IntSexpVector([ri.NA_Integer, -len(index)])
    if pd.api.types.is_integer_dtype(index.dtype):
        return _integer_to_r(np.asarray(index, dtype=np.int64), "row names")
    return ri.StrSexpVector([str(i) for i in index])


def _is_default_index(index):
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


# R's NA_real_: a NaN whose low word is 1954; kept bit for bit so that R still sees NA.
_R_NA_REAL = np.array([0x7FF00000000007A2], dtype=np.uint64).view(np.float64)[0]
