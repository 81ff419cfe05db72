/* text_control.h - finds control characters in text read from a file
 * (names and values in a safetensors header): such text is refused, so
 * that no later message printing it can span lines or drive a terminal.
 * What this is not: an escaper (nothing with a control character is kept).
 */
#ifndef HVD_TRAINER_TEXT_CONTROL_H
#define HVD_TRAINER_TEXT_CONTROL_H

/* Offset of the first byte below 0x20 or 0x7f in s, or -1. Pure. */
long text_control_at(const char *s);

#endif
