#!/usr/bin/env python3
"""dicom_reference.py OUT - the DICOM test's files and their expected
results, for tests/test_dicom.c (group data-dicom).
dicom_reference.py --dataset OUT - a generic-layout data set of DX images
(OUT/set) and two broken variants (OUT/disagree, OUT/overlap); OUT/truth.txt
says `NAME PATIENT VIEW` per image.
dicom_reference.py --hostile OUT - files that must be refused within the
decoded-size budget (OUT/NAME, OUT/refused.txt: `NAME<TAB>REASON`) and
OUT/big.dcm, a legal 2048 x 2048 16-bit DX (8 MiB of pixels).

Copies the named test files of the pydicom wheel (pydicom/data/test_files;
a missing one is an error) and generates DX images with pydicom into
OUT/files, then writes OUT/manifest.txt, one tab-separated line per file:

  NAME ok W H MAXDIFF MINEXACT   the 8-bit reference is OUT/NAME.u8 (W*H
                                 bytes); chexnet's decode may differ by at
                                 most MAXDIFF, and at least MINEXACT of the
                                 pixels must be equal
  NAME refuse REASON             chexnet must refuse it, its message
                                 containing REASON
  NAME decodes W H                pydicom cannot decode it (its plugins lack
                                 the codec): chexnet decodes a W x H image
  NAME same OTHER                chexnet's decode equals OTHER's exactly

The reference is DICOM's pipeline computed here with pydicom + numpy:
pixel_array (pylibjpeg plugins for compressed syntaxes) -> apply_modality_lut
-> apply_voi (first VOI LUT Sequence item), else apply_windowing (first
Window Center/Width), else the 0.5-99.5 percentile window (numpy's
percentile, methods 'lower' and 'higher') -> divided by the output range
pydicom windows into -> 1 - t for MONOCHROME1 or Presentation LUT Shape
INVERSE -> floor(255 t + 0.5). What it does not do: run chexnet.
"""
import os
import shutil
import sys

import numpy as np
import pydicom
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.pixels import apply_modality_lut, apply_voi, apply_windowing
from pydicom.sequence import Sequence
from pydicom.uid import ExplicitVRLittleEndian, generate_uid

# Lossless syntaxes, and lossy JPEG 2000 / near-lossless JPEG-LS (the same
# decoders' arithmetic on both sides), give identical bytes.
EXACT = (0, 1.0)
# Lossy JPEG: GDCM's libjpeg and pylibjpeg's differ in the IDCT's last bits
# (measured: at most 3 levels, 98.6% of pixels equal on JPGExtended.dcm).
LOSSY_JPEG = (4, 0.95)

# name -> tolerance (decoded), "decodes W H" or the reason chexnet refuses it.
WHEEL = {
    "CT_small.dcm": EXACT,
    "MR_small.dcm": EXACT,
    "MR_small_RLE.dcm": EXACT,
    "MR_small_bigendian.dcm": EXACT,
    "MR_small_expb.dcm": EXACT,
    "MR_small_implicit.dcm": EXACT,
    "MR_small_padded.dcm": EXACT,
    "MR_small_jp2klossless.dcm": EXACT,
    "MR_small_jpeg_ls_lossless.dcm": EXACT,
    "image_dfl.dcm": EXACT,
    "examples_overlay.dcm": EXACT,
    "JPEG2000.dcm": EXACT,
    "693_J2KI.dcm": EXACT,
    "J2K_pixelrep_mismatch.dcm": EXACT,
    "JPEG-lossy.dcm": "decodes 256 1024",   # 12-bit lossy JPEG: pylibjpeg cannot
    "JPGExtended.dcm": LOSSY_JPEG,
    "JPEGLSNearLossless_08.dcm": EXACT,
    "JPEGLSNearLossless_16.dcm": EXACT,
    "badVR.dcm": "Number of Frames '1A'",
    "rtdose_1frame.dcm": EXACT,
    "MR_truncated.dcm": "truncated",
    "rtplan_truncated.dcm": "truncated or corrupt",
    # GDCM's first fragment ends at the embedded delimiter: its SIZ declares 3722445056 x 1024
    "JPEG2000-embedded-sequence-delimiter.dcm": "code stream of 3722445056 x 1024, 1 component(s) at 16 bits",
    "rtdose.dcm": "multi-frame (15 frames)",
    "examples_ybr_color.dcm": "multi-frame",
    "SC_rgb_rle_2frame.dcm": "multi-frame (2 frames)",
    "examples_rgb_color.dcm": "colour ('RGB'",
    "SC_rgb_jpeg_dcmtk.dcm": "colour ('YBR_FULL'",
    "SC_rgb_rle.dcm": "colour ('RGB'",
    "examples_palette.dcm": "colour ('PALETTE COLOR'",
    "examples_jpeg2k.dcm": "colour",
    "liver_1frame.dcm": "a segmentation",
    "test-SR.dcm": "no pixel data",
    "reportsi.dcm": "no pixel data",
    "rtplan.dcm": "no pixel data",
    "rtstruct.dcm": "no pixel data",
    "waveform_ecg.dcm": "no pixel data",
    "nested_priv_SQ.dcm": "cannot read",
    "dicomdirtests/DICOMDIR": "a DICOMDIR",
}


def output_range(ds):
    """The range apply_windowing maps into (pydicom's y_min, y_max)."""
    if ds.get("ModalityLUTSequence"):
        return 0.0, 2.0 ** ds.ModalityLUTSequence[0].LUTDescriptor[2] - 1
    bits = ds.BitsStored
    lo, hi = (0.0, 2.0 ** bits - 1) if ds.PixelRepresentation == 0 else \
        (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1) - 1)
    if "RescaleSlope" in ds and "RescaleIntercept" in ds:
        lo = lo * float(ds.RescaleSlope) + float(ds.RescaleIntercept)
        hi = hi * float(ds.RescaleSlope) + float(ds.RescaleIntercept)
    return lo, hi


def reference(ds):
    m = apply_modality_lut(ds.pixel_array, ds).astype(np.float64)
    voi = ds.get("VOILUTSequence")
    if voi and "LUTDescriptor" in voi[0] and "LUTData" in voi[0]:
        t = apply_voi(m, ds).astype(np.float64) / (2.0 ** voi[0].LUTDescriptor[2] - 1)
    elif "WindowCenter" in ds and "WindowWidth" in ds:
        lo, hi = output_range(ds)
        t = (apply_windowing(m, ds).astype(np.float64) - lo) / (hi - lo)
    else:
        lo = np.percentile(m, 0.5, method="lower")
        hi = np.percentile(m, 99.5, method="higher")
        t = np.clip((m - lo) / (hi - lo), 0, 1) if hi > lo else np.zeros_like(m)
    if ds.PhotometricInterpretation == "MONOCHROME1" or \
            ds.get("PresentationLUTShape", "") == "INVERSE":
        t = 1 - t
    return np.floor(255 * np.clip(t, 0, 1) + 0.5).astype(np.uint8)


def dx(picture, mono1=False, **attrs):
    """A DX data set of picture (uint16 or int16 2-D), explicit VR LE."""
    ds = Dataset()
    ds.file_meta = FileMetaDataset()
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds.file_meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.1.1"
    ds.file_meta.MediaStorageSOPInstanceUID = generate_uid()
    ds.SOPClassUID = ds.file_meta.MediaStorageSOPClassUID
    ds.SOPInstanceUID = ds.file_meta.MediaStorageSOPInstanceUID
    ds.Modality = "DX"
    ds.PatientID = attrs.pop("PatientID", "P-0001")
    ds.ViewPosition = attrs.pop("ViewPosition", "PA")
    ds.Rows, ds.Columns = picture.shape
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME1" if mono1 else "MONOCHROME2"
    ds.BitsAllocated = 16
    ds.BitsStored = attrs.pop("BitsStored", 12)
    ds.HighBit = ds.BitsStored - 1
    ds.PixelRepresentation = 1 if picture.dtype == np.int16 else 0
    for k, v in attrs.items():
        setattr(ds, k, v)
    raw = picture.astype(np.int32) & ((1 << ds.BitsStored) - 1)   # high bits zero
    ds.PixelData = raw.astype("<u2").tobytes()
    return ds


def lut_item(entries, first, data):
    item = Dataset()
    item.add_new(0x00283002, "US", [entries, first, 16])   # LUT Descriptor
    item.add_new(0x00283006, "US", [int(v) for v in data])   # LUT Data
    return item


def generated(files):
    """name -> (data set, tolerance or refusal); plus 'same' pairs."""
    y, x = np.mgrid[0:48, 0:64]
    body = (800 + 2600 * np.exp(-((x - 32) ** 2 / 300 + (y - 24) ** 2 / 180))
            + 37 * ((x * 7 + y * 13) % 11)).astype(np.uint16)   # 12-bit picture
    out, same = {}, []
    out["dx_mono2"] = (dx(body), EXACT)
    out["dx_mono1"] = (dx(4095 - body, mono1=True), EXACT)
    same.append(("dx_mono1", "dx_mono2"))
    out["dx_window_mono2"] = (dx(body, WindowCenter=2048, WindowWidth=3000,
                                 VOILUTFunction="LINEAR_EXACT"), EXACT)
    out["dx_window_mono1"] = (dx(4095 - body, mono1=True, WindowCenter=4095 - 2048,
                                 WindowWidth=3000, VOILUTFunction="LINEAR_EXACT"), EXACT)
    same.append(("dx_window_mono1", "dx_window_mono2"))
    out["dx_rescale_window"] = (dx(body, RescaleSlope="0.5", RescaleIntercept="-100",
                                   WindowCenter="900\\400", WindowWidth="1201\\50"), EXACT)
    out["dx_sigmoid"] = (dx(body, WindowCenter=2000, WindowWidth=1500,
                            VOILUTFunction="SIGMOID"), EXACT)
    ramp = (np.arange(4096) ** 0.5 * 1023).astype(np.uint16)   # 16-bit VOI LUT
    ds = dx(body)
    ds.VOILUTSequence = Sequence([lut_item(4096, 0, ramp)])
    out["dx_voi_lut"] = (ds, EXACT)
    ds = dx(body)
    ds.ModalityLUTSequence = Sequence([lut_item(3000, 500, np.arange(3000) * 2 + 7)])
    out["dx_modality_lut"] = (ds, EXACT)
    out["dx_presentation_inverse"] = (dx(4095 - body, PresentationLUTShape="INVERSE"), EXACT)
    same.append(("dx_presentation_inverse", "dx_mono2"))
    signed = (body.astype(np.int32) - 2048).astype(np.int16)
    out["dx_signed_12_in_16"] = (dx(signed, WindowCenter=0, WindowWidth=3500), EXACT)
    out["dx_signed_percentile"] = (dx(signed), EXACT)
    multi = dx(np.concatenate([body, body]))
    multi.NumberOfFrames = 2
    multi.Rows = 48
    out["dx_two_frames"] = (multi, "multi-frame (2 frames)")
    out["dx_bad_window"] = (dx(body, WindowCenter="1234", WindowWidth=100),
                            "Window Center 'abc': not a decimal number")   # patched below
    out["dx_bad_function"] = (dx(body, WindowCenter=10, WindowWidth=100, VOILUTFunction="CUBIC"),
                              "VOI LUT Function 'CUBIC'")
    return out, same


CLASSES = ("Atelectasis,Cardiomegaly,Effusion,Infiltration,Mass,Nodule,Pneumonia,"
           "Pneumothorax,Consolidation,Edema,Emphysema,Fibrosis,Pleural_Thickening,Hernia")


def write_set(folder, rows, patient_column):
    """rows: (split, name, data set, labels, csv patient)."""
    os.makedirs(os.path.join(folder, "images"), exist_ok=True)
    files = {"train": [], "test": []}
    for split, name, ds, labels, csv_patient in rows:
        ds.save_as(os.path.join(folder, "images", name), enforce_file_format=True)
        cells = ["images/" + name] + [str(v) for v in labels]
        files[split].append(",".join(cells + ([str(csv_patient)] if patient_column else [])))
    # the set's key (trainer/data/sets/split_key.h), fixed: the same split every run
    with open(os.path.join(folder, "chexnet-key.txt"), "w") as f:
        f.write("00112233445566778899aabbccddeeff\n")
    for split, lines in files.items():
        with open(os.path.join(folder, split + ".csv"), "w") as f:
            f.write("path," + CLASSES + (",patient" if patient_column else "") + "\n")
            f.write("".join(line + "\n" for line in lines))


def dataset(out):
    """12 DX images of 5 patients (A-C train, D, E test), PA and AP views;
    one file without extension (recognised by content)."""
    y, x = np.mgrid[0:64, 0:64]
    rows, truth = [], []
    plan = "AAABBBCCDDEE"
    for i, letter in enumerate(plan):
        pic = (600 + 40 * i + 2500 * np.exp(-((x - 20 - 2 * i) ** 2 + (y - 32) ** 2) / 200.0)
               ).astype(np.uint16)
        view = "PA" if i % 2 == 0 else "AP"
        ds = dx(pic, mono1=(i % 3 == 0), PatientID=f"HOSP-{letter}-{1000 + ord(letter)}",
                ViewPosition=view)
        name = f"img{i:02d}.dcm" if i != 7 else "scan07"
        labels = [(i >> (c % 4)) & 1 if c < 4 else 0 for c in range(14)]
        split = "test" if letter in "E" else "train"
        rows.append((split, name, ds, labels, ord(letter)))
        truth.append(f"{name} {letter} {view}")
    write_set(os.path.join(out, "set"), rows, False)
    # the CSV says patient 66 for one of A's images: a disagreement
    bad = [r if r[1] != "img01.dcm" else r[:4] + (66,) for r in rows]
    write_set(os.path.join(out, "disagree"), bad, True)
    # a test image of patient A: one patient in train and test
    overlap = [r if r[1] != "img02.dcm" else ("test",) + r[1:] for r in rows]
    write_set(os.path.join(out, "overlap"), overlap, False)
    with open(os.path.join(out, "truth.txt"), "w") as f:
        f.write("\n".join(truth) + "\n")


def deflated(ds, rows, cols, bits, path):
    """ds as Deflated Explicit VR Little Endian with a zero image of
    rows x cols at bits, compressed as it streams (a bomb: ~1000:1)."""
    from pydicom.filebase import DicomBytesIO
    from pydicom.filewriter import write_dataset, write_file_meta_info
    import zlib
    ds.Rows, ds.Columns, ds.BitsAllocated = rows, cols, bits
    ds.BitsStored, ds.HighBit = bits, bits - 1
    del ds.PixelData
    ds.file_meta.TransferSyntaxUID = "1.2.840.10008.1.2.1.99"
    meta = DicomBytesIO()
    meta.is_little_endian, meta.is_implicit_VR = True, False
    write_file_meta_info(meta, ds.file_meta, enforce_standard=True)
    body = DicomBytesIO()
    body.is_little_endian, body.is_implicit_VR = True, False
    write_dataset(body, ds)
    size = rows * cols * bits // 8
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = [z.compress(body.getvalue() + b"\xe0\x7f\x10\x00OW\0\0" + size.to_bytes(4, "little"))]
    chunk = bytes(1 << 24)
    for _ in range(size // len(chunk)):
        out.append(z.compress(chunk))
    out.append(z.flush())
    with open(path, "wb") as f:
        f.write(b"\0" * 128 + b"DICM" + meta.getvalue() + b"".join(out))


def hostile(out):
    """Each file with the reason chexnet refuses it (default budget)."""
    os.makedirs(out, exist_ok=True)
    y, x = np.mgrid[0:48, 0:64]
    body = (800 + 37 * ((x * 7 + y * 13) % 11)).astype(np.uint16)
    files = {}
    ds = dx(body)
    ds.Rows = ds.Columns = 16384
    ds.BitsAllocated = ds.BitsStored = 32
    ds.HighBit = 31
    files["declared_huge.dcm"] = (ds, "declared image of 16384 x 16384 (Columns x Rows), 1 sample(s) at 32 bits: "
                                  "268435456 pixels, 1024 MiB decoded, above the limit of 67108864 "
                                  "pixels and 128 MiB")
    ds = dx(body)
    ds.Rows = ds.Columns = 9000
    files["declared_9000.dcm"] = (ds, "81000000 pixels, 154 MiB decoded, above the limit")
    ds = dx(body)
    ds.PixelData = ds.PixelData[:len(ds.PixelData) // 4]
    files["short_pixels.dcm"] = (ds, "pixel data of 1536 bytes, short of the 6144 bytes of 64 x 48 at 16 bits")
    ds = dx(body)
    ds.BitsStored, ds.HighBit = 0, 0
    files["bits_stored_0.dcm"] = (ds, "Bits Stored '0' / High Bit '0' in the file: not 1..16")
    ds = dx(body)
    ds.BitsStored, ds.HighBit = 17, 16
    files["bits_stored_17.dcm"] = (ds, "Bits Stored '17' / High Bit '16' in the file: not 1..16")
    ds = dx(body)
    ds.HighBit = 15
    files["high_bit_15.dcm"] = (ds, "Bits Stored '12' / High Bit '15' in the file")
    src = os.path.join(os.path.dirname(pydicom.__file__), "data", "test_files")
    ds = pydicom.dcmread(os.path.join(src, "JPEG2000.dcm"))
    ds.Rows, ds.Columns = ds.Rows // 2, ds.Columns // 2
    files["j2k_larger_than_declared.dcm"] = (ds, "JPEG 2000 code stream of 256 x 1024, 1 component(s) "
                                             "at 16 bits: larger than the declared 128 x 512")
    ds = pydicom.dcmread(os.path.join(src, "JPGExtended.dcm"))
    ds.Rows = ds.Rows // 4
    files["jpeg_larger_than_declared.dcm"] = (ds, "JPEG code stream of 256 x 1024, 1 component(s) "
                                              "at 12 bits: larger than the declared 256 x 256")
    ds = pydicom.dcmread(os.path.join(src, "JPGExtended.dcm"))
    ds.BitsAllocated, ds.BitsStored, ds.HighBit = 8, 8, 7
    files["jpeg_deeper_than_declared.dcm"] = (ds, "JPEG code stream of 256 x 1024, 1 component(s) "
                                              "at 12 bits: larger than the declared 256 x 1024, "
                                              "1 sample(s) at 8 bits")
    lines = []
    for name, (ds, reason) in files.items():
        ds.save_as(os.path.join(out, name), enforce_file_format=True)
        lines.append(f"{name}\t{reason}")
    deflated(dx(body), 16384, 16384, 16, os.path.join(out, "deflate_bomb.dcm"))
    lines.append("deflate_bomb.dcm\tdeflated data set inflates past 192 MiB")
    with open(os.path.join(out, "refused.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    y, x = np.mgrid[0:2048, 0:2048]
    big = (600 + 3000 * np.exp(-((x - 1024) ** 2 + (y - 1024) ** 2) / 4e5)).astype(np.uint16)
    dx(big).save_as(os.path.join(out, "big.dcm"), enforce_file_format=True)


def main():
    if sys.argv[1] == "--dataset":
        dataset(sys.argv[2])
        return
    if sys.argv[1] == "--hostile":
        hostile(sys.argv[2])
        return
    out = sys.argv[1]
    files = os.path.join(out, "files")
    os.makedirs(os.path.join(files, "dicomdirtests"), exist_ok=True)
    src = os.path.join(os.path.dirname(pydicom.__file__), "data", "test_files")
    lines = []
    for name, want in WHEEL.items():
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            sys.exit(f"dicom_reference: '{path}': not in the pydicom wheel")
        shutil.copyfile(path, os.path.join(files, name))
        lines.append(entry(out, name, path, want))
    made, same = generated(files)
    for name, (ds, want) in made.items():
        path = os.path.join(files, name)
        ds.save_as(path, enforce_file_format=True)
        if name == "dx_bad_window":   # pydicom refuses to write a bad DS
            with open(path, "rb") as f:
                data = f.read()
            with open(path, "wb") as f:
                f.write(data.replace(b"1234", b"abc ", 1))
        lines.append(entry(out, name, path, want))
    # the same DX without preamble and meta (implicit VR LE from byte 0),
    # under a PNG's name: recognised by content
    ds = made["dx_mono2"][0].copy()
    del ds.file_meta
    ds.preamble = None
    raw_path = os.path.join(files, "dx_raw.png")
    ds.save_as(raw_path, implicit_vr=True, little_endian=True, enforce_file_format=False)
    same.append(("dx_raw.png", "dx_mono2"))
    lines += [f"{a}\tsame\t{b}" for a, b in same]
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def entry(out, name, path, want):
    if isinstance(want, str) and want.startswith("decodes "):
        return f"{name}\tdecodes\t" + "\t".join(want.split()[1:])
    if isinstance(want, str):
        return f"{name}\trefuse\t{want}"
    ds = pydicom.dcmread(path)
    ref = reference(ds)
    flat = name.replace("/", "_")
    ref.tofile(os.path.join(out, flat + ".u8"))
    return f"{name}\tok\t{ref.shape[1]}\t{ref.shape[0]}\t{want[0]}\t{want[1]}"


if __name__ == "__main__":
    main()
