package node

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Image is an OCI image made here, from a root file system or a few
// files: no registry is reachable, so every image a node runs is built
// locally and imported into its containerd.
type Image struct {
	// Ref is the name pods use, e.g. localhost/glance-krm-node/pause:1.
	Ref        string
	Dir        string          // a root file system, as one layer
	Files      map[string]File // or files, as one layer (after Dir's)
	Entrypoint []string
	Cmd        []string
	User       string
	Env        []string
	WorkingDir string
}

// File is one file of a Files layer.
type File struct {
	From    string // copied from this path, or
	Content []byte // this content
	Mode    int64  // 0o755 for a program
	Link    string // a symbolic link to this target instead
}

// ArchiveName is the file BuildArchive writes for an image under key.
func ArchiveName(cache, name, key string) string {
	return filepath.Join(cache, "images", name+"-"+key+".tar")
}

// BuildArchive writes the image as an OCI archive (ctr images import reads
// it) at path, unless a file is already there: callers put what the image
// is made of into the name (ArchiveName), so a new input is a new file.
// Layers are uncompressed: they are imported here, never pushed.
func BuildArchive(path string, img Image) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(filepath.Dir(path), ".build-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	layers, err := imageLayers(work, img)
	if err != nil {
		return err
	}
	config, manifest := imageConfig(img, layers)
	tag := img.Ref[strings.LastIndex(img.Ref, ":")+1:]
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []map[string]any{{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest.digest, "size": manifest.size,
			"annotations": map[string]string{"io.containerd.image.name": img.Ref, "org.opencontainers.image.ref.name": tag},
		}},
	})
	tmp := filepath.Join(work, "image.tar")
	if err := writeArchive(tmp, index, append([]blob{config, manifest}, layers...)); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// imageLayers are the image's layers, written into work: its root file
// system, then its files.
func imageLayers(work string, img Image) ([]blob, error) {
	var layers []blob
	if img.Dir != "" {
		f := filepath.Join(work, "rootfs.tar")
		// GNU tar keeps hard links, devices and numeric owners as they are.
		if out, err := exec.Command("tar", "--numeric-owner", "--xattrs", "--sort=name", "--mtime=@0", "-C", img.Dir,
			"--exclude=./proc/*", "--exclude=./dev/*", "--exclude=./sys/*", "-cf", f, ".").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tar %s: %w\n%s", img.Dir, err, out)
		}
		b, err := fileBlob(f)
		if err != nil {
			return nil, err
		}
		layers = append(layers, b)
	}
	if len(img.Files) > 0 {
		f := filepath.Join(work, "files.tar")
		if err := writeFilesLayer(f, img.Files); err != nil {
			return nil, err
		}
		b, err := fileBlob(f)
		if err != nil {
			return nil, err
		}
		layers = append(layers, b)
	}
	return layers, nil
}

// imageConfig are the image's config and manifest blobs.
func imageConfig(img Image, layers []blob) (config, manifest blob) {
	diffIDs := make([]string, len(layers))
	descs := make([]map[string]any, len(layers))
	for i, l := range layers {
		diffIDs[i] = l.digest
		descs[i] = map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": l.digest, "size": l.size}
	}
	cfg := map[string]any{"Env": append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, img.Env...)}
	for k, v := range map[string]any{"Entrypoint": img.Entrypoint, "Cmd": img.Cmd} {
		if v.([]string) != nil {
			cfg[k] = v
		}
	}
	if img.User != "" {
		cfg["User"] = img.User
	}
	if img.WorkingDir != "" {
		cfg["WorkingDir"] = img.WorkingDir
	}
	config = jsonBlob(map[string]any{
		"architecture": "amd64", "os": "linux", "created": time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": cfg, "rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	manifest = jsonBlob(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config.digest, "size": config.size},
		"layers": descs,
	})
	return config, manifest
}

// writeArchive writes an OCI layout as one tar file at path.
func writeArchive(path string, index []byte, blobs []blob) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	add := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	err = add("oci-layout", 30, strings.NewReader(`{"imageLayoutVersion":"1.0.0"}`))
	if err == nil {
		err = add("index.json", int64(len(index)), bytes.NewReader(index))
	}
	for _, b := range blobs {
		if err != nil {
			break
		}
		err = b.copyInto(add)
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// blob is one content-addressed file of the archive.
type blob struct {
	digest string
	size   int64
	file   string // its content is this file, or
	data   []byte // this
}

func (b blob) copyInto(add func(string, int64, io.Reader) error) error {
	name := "blobs/sha256/" + strings.TrimPrefix(b.digest, "sha256:")
	if b.file == "" {
		return add(name, b.size, bytes.NewReader(b.data))
	}
	f, err := os.Open(b.file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	return add(name, b.size, f)
}

func jsonBlob(v any) blob {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return blob{digest: "sha256:" + hex.EncodeToString(sum[:]), size: int64(len(b)), data: b}
}

func fileBlob(path string) (blob, error) {
	f, err := os.Open(path)
	if err != nil {
		return blob{}, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return blob{}, err
	}
	return blob{digest: "sha256:" + hex.EncodeToString(h.Sum(nil)), size: n, file: path}, nil
}

// writeFilesLayer writes files as a layer, parents first, owned by root.
func writeFilesLayer(path string, files map[string]File) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	dirs := map[string]bool{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	write := func() error {
		for _, name := range names {
			f := files[name]
			rel := strings.TrimPrefix(name, "/")
			for _, d := range parents(rel) {
				if dirs[d] {
					continue
				}
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
					return err
				}
			}
			if f.Link != "" {
				if err := tw.WriteHeader(&tar.Header{Name: rel, Linkname: f.Link, Typeflag: tar.TypeSymlink, Mode: 0o777}); err != nil {
					return err
				}
				continue
			}
			content := f.Content
			if f.From != "" {
				if content, err = os.ReadFile(f.From); err != nil {
					return err
				}
			}
			mode := f.Mode
			if mode == 0 {
				mode = 0o644
			}
			if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: mode, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
				return err
			}
			if _, err := tw.Write(content); err != nil {
				return err
			}
		}
		return tw.Close()
	}
	err = write()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// parents are the directories above a relative path, outermost first.
func parents(rel string) []string {
	var out []string
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}
