/* dicom_gdcm.cc - dicom_read.h through GDCM (libgdcm-dev): the only C++
 * file of the trainer, and the only one that includes GDCM. It parses a
 * data set from memory, decodes the first frame with GDCM's codecs and
 * copies out attributes as plain C data; every GDCM exception and failure
 * becomes a one-line reason. It runs in a reader process that
 * dicom_reader.c starts per file (GDCM's assert()s abort on malformed
 * input; the reader's stderr, where GDCM's codecs print, goes to
 * /dev/null) and hands its result back in a memfd (dicom_gdcm.h).
 * Before the library builds the image, the file's own tags are checked
 * (the library normalises them): the decoded size against the budget
 * (dicom_budget.h), Bits Stored 1..Bits Allocated with High Bit = Bits
 * Stored - 1, native pixel data at least one frame long; a deflated file
 * is inflated within the budget first (dicom_inflate.c) and a compressed
 * fragment's own size checked before decoding (dicom_codestream.c). An
 * allocation that fails ends the reader with DICOM_READER_EXIT_NOMEM.
 * What it does not do: start processes (dicom_reader.c), or interpret
 * pixels or attributes (dicom_pixels.c).
 */
#include <gdcmAttribute.h>
#include <gdcmImage.h>
#include <gdcmImageReader.h>
#include <gdcmSequenceOfItems.h>
#include <gdcmTrace.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <istream>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data/dicom/dicom_budget.h"
#include "data/dicom/dicom_codestream.h"
#include "data/dicom/dicom_gdcm.h"
#include "data/dicom/dicom_inflate.h"
#include "data/dicom/dicom_read.h"

namespace {

[[noreturn]] void out_of_memory()
{
	_exit(DICOM_READER_EXIT_NOMEM);
}

/* The file's bytes as a stream, without a copy (the library seeks). */
class memory_buffer : public std::streambuf {
public:
	memory_buffer(const void *data, size_t bytes)
	{
		char *b = const_cast<char *>(static_cast<const char *>(data));
		setg(b, b, b + bytes);
	}
protected:
	pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override
	{
		char *base = dir == std::ios_base::beg ? eback() : dir == std::ios_base::cur ? gptr() : egptr();
		if (off < eback() - base || off > egptr() - base)
			return pos_type(off_type(-1));
		setg(eback(), base + off, egptr());
		return pos_type(gptr() - eback());
	}
	pos_type seekpos(pos_type pos, std::ios_base::openmode which) override
	{
		return seekoff(off_type(pos), std::ios_base::beg, which);
	}
};

/* GDCM's ImageReader, split: parse the data set first (our checks run on
 * it), then build the image. Number of Frames is added as 1 when absent:
 * GDCM asserts on its absence in multi-frame IODs (RT Dose). */
class split_reader : public gdcm::ImageReader {
public:
	bool read_data_set() { return gdcm::Reader::Read(); }
	bool read_image()
	{
		gdcm::DataSet &ds = GetFile().GetDataSet();
		const gdcm::Tag frames(0x0028, 0x0008);
		if (!ds.FindDataElement(frames)) {
			gdcm::DataElement de(frames);
			de.SetVR(gdcm::VR::IS);
			de.SetByteValue("1 ", 2);
			ds.Insert(de);
		}
		gdcm::MediaStorage ms;
		ms.SetFromFile(GetFile());
		if (!ReadImage(ms))
			return false;
		/* what ImageReader::Read adds: the codec is chosen by it */
		GetImage().SetTransferSyntax(GetFile().GetHeader().GetDataSetTransferSyntax());
		return true;
	}
};

/* A string attribute: its bytes without padding (spaces, NULs), "" when
 * absent or empty; at most out_bytes - 1 bytes (longer: -1). */
int get_string(const gdcm::DataSet &ds, uint16_t group, uint16_t element, char *out,
	       size_t out_bytes)
{
	gdcm::Tag tag(group, element);
	out[0] = 0;
	if (!ds.FindDataElement(tag))
		return 0;
	const gdcm::ByteValue *bv = ds.GetDataElement(tag).GetByteValue();
	if (!bv || !bv->GetPointer())
		return 0;
	std::string s(bv->GetPointer(), bv->GetLength());
	size_t end = s.find_last_not_of(std::string(" \0", 2));
	size_t begin = s.find_first_not_of(' ');
	if (end == std::string::npos || begin == std::string::npos || begin > end)
		return 0;
	s = s.substr(begin, end - begin + 1);
	if (s.size() >= out_bytes)
		return -1;
	memcpy(out, s.data(), s.size());
	out[s.size()] = 0;
	return 0;
}

/* The first item of sequence tag, or NULL. */
const gdcm::DataSet *first_item(const gdcm::DataSet &ds, uint16_t group, uint16_t element)
{
	gdcm::Tag tag(group, element);
	if (!ds.FindDataElement(tag))
		return NULL;
	gdcm::SmartPointer<gdcm::SequenceOfItems> sq = ds.GetDataElement(tag).GetValueAsSQ();
	if (!sq || sq->GetNumberOfItems() < 1)
		return NULL;
	return &sq->GetItem(1).GetNestedDataSet();
}

/* A LUT item: descriptor (0028,3002) and data (0028,3006), 16-bit words.
 * first is read as signed when the pixels are. */
int get_lut(const gdcm::DataSet *item, int pixel_signed, dicom_lut *lut, char *why,
	    size_t why_bytes)
{
	if (!item)
		return 0;
	const gdcm::Tag desc_tag(0x0028, 0x3002), data_tag(0x0028, 0x3006);
	const gdcm::ByteValue *desc = item->FindDataElement(desc_tag) ?
		item->GetDataElement(desc_tag).GetByteValue() : NULL;
	const gdcm::ByteValue *data = item->FindDataElement(data_tag) ?
		item->GetDataElement(data_tag).GetByteValue() : NULL;
	if (!desc || desc->GetLength() != 6 || !data) {
		snprintf(why, why_bytes, "LUT item without a 3-value descriptor and data");
		return -1;
	}
	uint16_t d[3];
	memcpy(d, desc->GetPointer(), sizeof(d));
	lut->entries = d[0] ? d[0] : 65536u;
	lut->first = pixel_signed ? (int16_t)d[1] : (int32_t)d[1];
	lut->bits = d[2];
	if (data->GetLength() < (size_t)lut->entries * 2) {
		snprintf(why, why_bytes, "LUT data of %u bytes for %u entries",
			 (unsigned)data->GetLength(), lut->entries);
		return -1;
	}
	lut->data = static_cast<uint16_t *>(malloc((size_t)lut->entries * 2));
	if (!lut->data)
		out_of_memory();
	memcpy(lut->data, data->GetPointer(), (size_t)lut->entries * 2);
	lut->present = 1;
	return 0;
}

int read_attributes(const gdcm::File &file, dicom_raw *out, char *why, size_t why_bytes)
{
	const gdcm::DataSet &ds = file.GetDataSet();
	const struct { uint16_t g, e; char *to; size_t bytes; const char *name; } strings[] = {
		{ 0x0008, 0x0016, out->sop_class, sizeof(out->sop_class), "SOP Class UID" },
		{ 0x0008, 0x0060, out->modality, sizeof(out->modality), "Modality" },
		{ 0x0028, 0x0008, out->frames_text, sizeof(out->frames_text), "Number of Frames" },
		{ 0x0010, 0x0020, out->patient_id, sizeof(out->patient_id), "Patient ID" },
		{ 0x0018, 0x5101, out->view, sizeof(out->view), "View Position" },
		{ 0x0028, 0x0004, out->photometric, sizeof(out->photometric), "Photometric Interpretation" },
		{ 0x0028, 0x1050, out->window_center, sizeof(out->window_center), "Window Center" },
		{ 0x0028, 0x1051, out->window_width, sizeof(out->window_width), "Window Width" },
		{ 0x0028, 0x1052, out->intercept, sizeof(out->intercept), "Rescale Intercept" },
		{ 0x0028, 0x1053, out->slope, sizeof(out->slope), "Rescale Slope" },
		{ 0x0028, 0x1056, out->voi_function, sizeof(out->voi_function), "VOI LUT Function" },
		{ 0x2050, 0x0020, out->presentation_shape, sizeof(out->presentation_shape),
		  "Presentation LUT Shape" },
	};
	for (const auto &s : strings)
		if (get_string(ds, s.g, s.e, s.to, s.bytes) != 0) {
			snprintf(why, why_bytes, "%s: longer than %zu bytes", s.name, s.bytes - 1);
			return -1;
		}
	if (get_string(file.GetHeader(), 0x0002, 0x0002, out->media_class, sizeof(out->media_class)) != 0)
		out->media_class[0] = 0;
	const char *ts = gdcm::TransferSyntax::GetTSString(file.GetHeader().GetDataSetTransferSyntax());
	snprintf(out->transfer_syntax, sizeof(out->transfer_syntax), "%s", ts ? ts : "unknown");
	out->has_pixel_data = ds.FindDataElement(gdcm::Tag(0x7fe0, 0x0010));
	return 0;
}

/* GDCM pads native pixel data that the file cuts short (a warning only):
 * 1 when the value of the last (7FE0,0010) element whose length field
 * says vl (implicit, or explicit OB/OW) runs past the end of the bytes. */
int native_pixels_cut(const void *data, size_t bytes, uint32_t vl, bool big_endian)
{
	const uint8_t *p = static_cast<const uint8_t *>(data);
	const uint8_t tag[4] = { 0xe0, 0x7f, 0x10, 0x00 }, tag_be[4] = { 0x7f, 0xe0, 0x00, 0x10 };
	auto u32 = [&](size_t at) {
		return big_endian ? (uint32_t)p[at] << 24 | p[at + 1] << 16 | p[at + 2] << 8 | p[at + 3]
				  : (uint32_t)p[at + 3] << 24 | p[at + 2] << 16 | p[at + 1] << 8 | p[at];
	};
	for (size_t at = bytes >= 12 ? bytes - 12 : 0; bytes >= 12; at--) {
		if (!memcmp(p + at, big_endian ? tag_be : tag, 4)) {
			bool ob_ow = (p[at + 4] == 'O' && (p[at + 5] == 'B' || p[at + 5] == 'W'));
			size_t start = ob_ow ? at + 12 : at + 8;
			if ((ob_ow ? u32(at + 8) : u32(at + 4)) == vl)
				return start + vl > bytes;
		}
		if (at == 0)
			break;
	}
	return 0;
}

/* A US attribute of the data set as the file has it; -1 when absent. */
template <uint16_t G, uint16_t E> long declared(const gdcm::DataSet &ds)
{
	if (!ds.FindDataElement(gdcm::Tag(G, E)) || ds.GetDataElement(gdcm::Tag(G, E)).IsEmpty())
		return -1;
	gdcm::Attribute<G, E> a;
	a.SetFromDataSet(ds);
	return (long)a.GetValue();
}

/* The image the file's own tags declare, judged before the library
 * builds (and normalises) it: the budget, the bits, short native pixel
 * data. Number of Frames > 1 is refused later, undecoded. */
int check_declared(const gdcm::File &file, const dicom_limits *limits, char *why, size_t why_bytes)
{
	const gdcm::DataSet &ds = file.GetDataSet();
	long rows = declared<0x0028, 0x0010>(ds), cols = declared<0x0028, 0x0011>(ds);
	long spp = declared<0x0028, 0x0002>(ds), ba = declared<0x0028, 0x0100>(ds);
	long bs = declared<0x0028, 0x0101>(ds), hb = declared<0x0028, 0x0102>(ds);
	if (rows < 0 || cols < 0 || ba < 0)
		return 0;   /* the library cannot build an image: dicom_pixels.c says so */
	spp = spp < 1 ? 1 : spp;
	uint64_t pixels = (uint64_t)rows * (uint64_t)cols;
	uint64_t frame_bytes = (pixels * (uint64_t)spp * (uint64_t)ba + 7) / 8;
	if (pixels > limits->max_pixels || frame_bytes > limits->max_bytes)
		return snprintf(why, why_bytes, "declared image of %ld x %ld (Columns x Rows), %ld sample(s) at "
				"%ld bits: %llu pixels, %llu MiB decoded, above the limit of %llu pixels and "
				"%llu MiB (--max-pixels): refused before decoding", cols, rows, spp, ba,
				(unsigned long long)pixels, (unsigned long long)(frame_bytes >> 20),
				(unsigned long long)limits->max_pixels,
				(unsigned long long)(limits->max_bytes >> 20)), -1;
	if (bs >= 0 && (bs < 1 || bs > ba || (hb >= 0 && hb != bs - 1)))
		return snprintf(why, why_bytes, "Bits Stored '%ld' / High Bit '%ld' in the file: not 1..%ld "
				"with High Bit = Bits Stored - 1", bs, hb, ba), -1;
	const gdcm::Tag pixel_data(0x7fe0, 0x0010);
	const gdcm::ByteValue *bv = ds.FindDataElement(pixel_data) ?
		ds.GetDataElement(pixel_data).GetByteValue() : NULL;
	if (!file.GetHeader().GetDataSetTransferSyntax().IsEncapsulated() && bv &&
	    bv->GetLength() < frame_bytes)
		return snprintf(why, why_bytes, "pixel data of %u bytes, short of the %llu bytes of %ld x %ld at "
				"%ld bits", (unsigned)bv->GetLength(), (unsigned long long)frame_bytes, cols,
				rows, ba), -1;
	return 0;
}

/* A compressed first fragment whose own header declares a larger image
 * than the data set: refused before its decoder allocates for it. */
int check_codestream(const gdcm::DataSet &ds, const dicom_raw *out, char *why, size_t why_bytes)
{
	const gdcm::DataElement &pd = ds.GetDataElement(gdcm::Tag(0x7fe0, 0x0010));
	const gdcm::SequenceOfFragments *sf = pd.GetSequenceOfFragments();
	if (!sf || sf->GetNumberOfFragments() < 1)
		return 0;
	const gdcm::ByteValue *bv = sf->GetFragment(0).GetByteValue();
	codestream_size cs;
	int rc = bv && bv->GetPointer() ? dicom_codestream_size(reinterpret_cast<const uint8_t *>(bv->GetPointer()),
								bv->GetLength(), &cs) : 0;
	if (rc < 0)
		return snprintf(why, why_bytes, "%s code stream declares an empty image", cs.kind), -1;
	if (rc == 1 && (cs.width > out->width || cs.height > out->height || cs.components > out->samples ||
			cs.bits > out->bits_allocated))
		return snprintf(why, why_bytes, "%s code stream of %u x %u, %u component(s) at %u bits: larger "
				"than the declared %u x %u, %u sample(s) at %u bits: refused before decoding",
				cs.kind, cs.width, cs.height, cs.components, cs.bits, out->width, out->height,
				out->samples, out->bits_allocated), -1;
	return 0;
}

int read_image(gdcm::ImageReader &reader, const void *data, size_t bytes, uint32_t max_side,
	       dicom_raw *out, char *why, size_t why_bytes)
{
	const gdcm::Image &img = reader.GetImage();
	const gdcm::PixelFormat &pf = img.GetPixelFormat();
	out->width = img.GetDimension(0);
	out->height = img.GetDimension(1);
	out->frames = img.GetNumberOfDimensions() > 2 ? img.GetDimension(2) : 1;
	out->samples = pf.GetSamplesPerPixel();
	out->bits_allocated = pf.GetBitsAllocated();
	out->bits_stored = pf.GetBitsStored();
	out->high_bit = pf.GetHighBit();
	out->pixel_signed = pf.GetPixelRepresentation();
	const char *pi = gdcm::PhotometricInterpretation::GetPIString(img.GetPhotometricInterpretation());
	snprintf(out->photometric, sizeof(out->photometric), "%s", pi ? pi : "");
	for (size_t n = strlen(out->photometric); n && out->photometric[n - 1] == ' ';)
		out->photometric[--n] = 0;
	if (out->frames != 1 || out->samples != 1 || !out->width || !out->height ||
	    out->width > max_side || out->height > max_side ||
	    (out->bits_allocated != 8 && out->bits_allocated != 16 && out->bits_allocated != 32))
		return 0;   /* dicom_pixels.c refuses it with the reason */
	const gdcm::DataSet &ds = reader.GetFile().GetDataSet();
	if (get_lut(first_item(ds, 0x0028, 0x3000), out->pixel_signed, &out->modality_lut, why, why_bytes) ||
	    get_lut(first_item(ds, 0x0028, 0x3010), out->pixel_signed, &out->voi_lut, why, why_bytes))
		return -1;
	size_t want = (size_t)out->width * out->height * (out->bits_allocated / 8);
	const gdcm::DataElement &pd = ds.GetDataElement(gdcm::Tag(0x7fe0, 0x0010));
	const gdcm::TransferSyntax &ts = reader.GetFile().GetHeader().GetDataSetTransferSyntax();
	if (!ts.IsEncapsulated() && pd.GetVL().IsUndefined() == false &&
	    native_pixels_cut(data, bytes, (uint32_t)pd.GetVL(), ts.GetSwapCode() == gdcm::SwapCode::BigEndian)) {
		snprintf(why, why_bytes, "pixel data of %u bytes cut short by the end of the file: truncated",
			 (unsigned)pd.GetVL());
		return -1;
	}
	size_t len = img.GetBufferLength();
	if (len != want) {
		snprintf(why, why_bytes, "pixel data of %zu bytes for %ux%u at %u bits", len,
			 out->width, out->height, out->bits_allocated);
		return -1;
	}
	if (ts.IsEncapsulated() && check_codestream(ds, out, why, why_bytes) != 0)
		return -1;
	out->pixels = malloc(len);
	if (!out->pixels)
		out_of_memory();
	if (!img.GetBuffer(static_cast<char *>(out->pixels))) {
		/* a codec written in C reports a failed allocation as a failed
		 * decode: when the declared size cannot be had now, memory was
		 * the cause */
		void *probe = malloc(len);
		if (!probe)
			out_of_memory();
		free(probe);
		snprintf(why, why_bytes, "pixel data cannot be decoded (transfer syntax %s): "
			 "truncated or corrupt", out->transfer_syntax);
		return -1;
	}
	out->pixel_bytes = len;
	return 0;
}

} // namespace

extern "C" int dicom_read_available(void)
{
	return 1;
}

extern "C" void dicom_raw_free(struct dicom_raw *raw)
{
	free(raw->pixels);
	free(raw->modality_lut.data);
	free(raw->voi_lut.data);
	memset(raw, 0, sizeof(*raw));
}

namespace {

int read_in_process(const void *data, size_t bytes, const dicom_limits *limits, dicom_raw *out,
		    char *why, size_t why_bytes)
{
	memset(out, 0, sizeof(*out));
	gdcm::Trace::SetDebug(false);
	gdcm::Trace::SetWarning(false);
	gdcm::Trace::SetError(false);
	uint8_t *inflated = NULL;
	size_t inflated_bytes = 0;
	int deflated = dicom_inflate(static_cast<const uint8_t *>(data), bytes,
				     limits->max_bytes + DICOM_INFLATE_SLACK, &inflated, &inflated_bytes, why,
				     why_bytes);
	if (deflated == -2)
		out_of_memory();
	if (deflated < 0)
		return -1;
	if (deflated == 1)   /* freed at the reader's exit */
		data = inflated, bytes = inflated_bytes;
	try {
		memory_buffer buffer(data, bytes);
		std::istream in(&buffer);
		split_reader reader;
		reader.SetStream(in);
		if (!reader.read_data_set() || reader.GetFile().GetDataSet().IsEmpty()) {
			snprintf(why, why_bytes, "not a DICOM data set GDCM can parse (truncated or corrupt)");
			return -1;
		}
		if (read_attributes(reader.GetFile(), out, why, why_bytes) != 0 ||
		    (out->has_pixel_data && check_declared(reader.GetFile(), limits, why, why_bytes) != 0))
			goto fail;
		/* no pixel data, or no image GDCM can build: dicom_pixels.c says
		 * why from the attributes */
		if (!out->has_pixel_data || !(out->image_parsed = reader.read_image()))
			return 0;
		if (read_image(reader, data, bytes, limits->max_side, out, why, why_bytes) != 0)
			goto fail;
		return 0;
	} catch (const std::bad_alloc &) {
		out_of_memory();
	} catch (const std::exception &e) {
		snprintf(why, why_bytes, "GDCM: %s", e.what());
	} catch (...) {
		snprintf(why, why_bytes, "GDCM failed on the file");
	}
fail:
	dicom_raw_free(out);
	return -1;
}

/* What the child hands back at the start of the shared file; the LUTs'
 * data and the pixels follow it. */
struct shared_result {
	int rc;
	char why[512];
	dicom_raw raw;
};

size_t payload_bytes(const dicom_raw *raw)
{
	size_t n = raw->pixels ? raw->pixel_bytes : 0;
	for (const dicom_lut *l : { &raw->modality_lut, &raw->voi_lut })
		n += l->data ? (size_t)l->entries * 2 : 0;
	return n;
}

} // namespace

extern "C" void dicom_gdcm_read_to(const void *data, size_t bytes, const dicom_limits *limits, int fd)
{
	shared_result res;
	std::set_new_handler(out_of_memory);
	int null = open("/dev/null", O_WRONLY);   /* the codecs print to stderr */
	if (null >= 0)
		dup2(null, 2);
	alarm(DICOM_READ_SECONDS);
	memset(&res, 0, sizeof(res));
	res.rc = read_in_process(data, bytes, limits, &res.raw, res.why, sizeof(res.why));
	size_t total = sizeof(res) + (res.rc == 0 ? payload_bytes(&res.raw) : 0);
	if (ftruncate(fd, (off_t)total) != 0)
		_exit(3);
	uint8_t *map = static_cast<uint8_t *>(mmap(NULL, total, PROT_WRITE, MAP_SHARED, fd, 0));
	if (map == MAP_FAILED)
		_exit(3);
	memcpy(map, &res, sizeof(res));
	uint8_t *at = map + sizeof(res);
	if (res.rc == 0) {
		for (dicom_lut *l : { &res.raw.modality_lut, &res.raw.voi_lut })
			if (l->data) {
				memcpy(at, l->data, (size_t)l->entries * 2);
				at += (size_t)l->entries * 2;
			}
		if (res.raw.pixels)
			memcpy(at, res.raw.pixels, res.raw.pixel_bytes);
	}
	_exit(0);
}

extern "C" int dicom_gdcm_take_result(const uint8_t *map, size_t map_bytes, dicom_raw *out,
				      char *why, size_t why_bytes)
{
	const shared_result *res = reinterpret_cast<const shared_result *>(map);
	const uint8_t *at = map + sizeof(*res);
	if (map_bytes < sizeof(*res) || (res->rc == 0 && map_bytes - sizeof(*res) < payload_bytes(&res->raw))) {
		snprintf(why, why_bytes, "the reader's result is incomplete");
		return -1;
	}
	if (res->rc != 0) {
		snprintf(why, why_bytes, "%.*s", (int)sizeof(res->why) - 1, res->why);
		return -1;
	}
	*out = res->raw;
	out->pixels = out->modality_lut.data = out->voi_lut.data = NULL;
	const dicom_lut *src[2] = { &res->raw.modality_lut, &res->raw.voi_lut };
	dicom_lut *dst[2] = { &out->modality_lut, &out->voi_lut };
	for (int k = 0; k < 2; k++) {
		dicom_lut *l = dst[k];
		if (!src[k]->data)   /* the child's pointer: only whether it had one */
			continue;
		l->data = static_cast<uint16_t *>(malloc((size_t)l->entries * 2));
		if (!l->data)
			goto oom;
		memcpy(l->data, at, (size_t)l->entries * 2);
		at += (size_t)l->entries * 2;
	}
	if (res->raw.pixels) {
		out->pixels = malloc(out->pixel_bytes);
		if (!out->pixels)
			goto oom;
		memcpy(out->pixels, at, out->pixel_bytes);
	}
	return 0;
oom:
	dicom_raw_free(out);
	snprintf(why, why_bytes, "out of memory");
	return -1;
}
