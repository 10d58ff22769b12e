/* gv_lsan.h - for tests that run Graphviz in-process: its process-wide tables (plugin and
 * colour caches) stay alive until exit on purpose and are not ours to free. */
#ifndef SC_GV_LSAN_H
#define SC_GV_LSAN_H

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libgvc.so\nleak:libcgraph.so\nleak:libcdt.so\nleak:libgvplugin\nleak:libltdl\n"
           "leak:libexpat\nleak:libpango\nleak:libcairo\nleak:libfontconfig\nleak:libgobject\n"
           "leak:libglib\nleak:libharfbuzz\n";
}

#endif
