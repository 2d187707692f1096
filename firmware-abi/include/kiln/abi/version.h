/* kiln firmware ABI: version constants shared by compiler, runtime, cmodel. */
#ifndef KILN_ABI_VERSION_H
#define KILN_ABI_VERSION_H

/* ABI of the command records and the register map (commands.h, regs.h).
 * Major changes break old firmware; minor changes only append. */
#define KILN_ABI_VERSION_MAJOR 1
#define KILN_ABI_VERSION_MINOR 7

/* bmodel container format (bmodel.h + schemas/bmodel.fbs). A reader accepts
 * the same major and any minor up to its own. */
#define KILN_BMODEL_FORMAT_MAJOR 1
#define KILN_BMODEL_FORMAT_MINOR 6

#endif
