//! Built-in SQL functions (lang_corefunc.html, lang_aggfunc.html).
