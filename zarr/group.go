package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Group is an open Zarr group (v3 zarr.json with node_type "group", or v2
// .zgroup): its attributes and, when it has them, its consolidated
// metadata (zarr-python's consolidated_metadata in zarr.json, or v2's
// .zmetadata), which lists its members without listing the store.
type Group struct {
	store  Store
	path   string
	format int
	attrs  map[string]any
	// consolidated maps node paths relative to the group to metadata
	// documents: for v3 the zarr.json of each node, for v2 the .zarray,
	// .zgroup and .zattrs documents under "<node>/<name>".
	consolidated map[string]json.RawMessage
}

// Member is a node directly inside a group.
type Member struct {
	Name     string // the node's name in the group
	NodeType string // "array" or "group"
}

// CreateGroup writes the metadata of a group at path ("" is the store
// root): zarr.json for format 3 (or 0), .zgroup and .zattrs for format 2.
func CreateGroup(ctx context.Context, s Store, path string, format int, attrs map[string]any) (*Group, error) {
	p, err := cleanNodePath(path)
	if err != nil {
		return nil, err
	}
	if attrs == nil {
		attrs = map[string]any{}
	}
	attrs = cloneJSONMap(attrs)
	switch format {
	case 0, 3:
		doc, err := marshalIndent(map[string]any{"zarr_format": 3, "node_type": "group", "attributes": attrs})
		if err != nil {
			return nil, err
		}
		if err := s.Set(ctx, nodeKey(p, metadataKey), doc); err != nil {
			return nil, err
		}
		format = 3
	case 2:
		zattrs, err := marshalIndent(attrs)
		if err != nil {
			return nil, err
		}
		if err := s.Set(ctx, nodeKey(p, zattrsKey), zattrs); err != nil {
			return nil, err
		}
		if err := s.Set(ctx, nodeKey(p, zgroupKey), []byte("{\n  \"zarr_format\": 2\n}\n")); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: zarr_format %d", ErrNotImplemented, format)
	}
	return OpenGroup(ctx, s, p)
}

// OpenGroup opens the group at path ("" is the store root), v3 or v2. A
// missing group is an error wrapping ErrNotFound.
func OpenGroup(ctx context.Context, s Store, path string) (*Group, error) {
	p, err := cleanNodePath(path)
	if err != nil {
		return nil, err
	}
	g := &Group{store: s, path: p}
	key := nodeKey(p, metadataKey)
	doc, err := s.Get(ctx, key)
	switch {
	case err == nil:
		g.format = 3
		if err := g.parseV3(doc); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, key)
		}
		return g, nil
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	zkey := nodeKey(p, zgroupKey)
	zgroup, err := s.Get(ctx, zkey)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: no group at %q (no %s or %s)", ErrNotFound, path, key, zkey)
	}
	if err != nil {
		return nil, err
	}
	g.format = 2
	var zg struct {
		ZarrFormat json.Number `json:"zarr_format"`
	}
	if err := decodeJSON(zgroup, &zg); err != nil || zg.ZarrFormat != "2" {
		return nil, fmt.Errorf("%w: %s is not a Zarr v2 group document", ErrInvalid, zkey)
	}
	if zattrs, err := s.Get(ctx, nodeKey(p, zattrsKey)); err == nil {
		if err := decodeJSON(zattrs, &g.attrs); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, nodeKey(p, zattrsKey))
		}
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if zmeta, err := s.Get(ctx, nodeKey(p, zmetadataKey)); err == nil {
		var doc struct {
			Format   json.Number                `json:"zarr_consolidated_format"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if err := decodeJSON(zmeta, &doc); err != nil || doc.Format != "1" {
			return nil, fmt.Errorf("%w: %s is not consolidated metadata format 1", ErrInvalid, nodeKey(p, zmetadataKey))
		}
		g.consolidated = doc.Metadata
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if g.attrs == nil {
		g.attrs = map[string]any{}
	}
	return g, nil
}

func (g *Group) parseV3(data []byte) error {
	var doc map[string]json.RawMessage
	if err := decodeJSON(data, &doc); err != nil {
		return err
	}
	var format json.Number
	if err := field(doc, "zarr_format", &format, true); err != nil {
		return err
	}
	if format != "3" {
		return fmt.Errorf("%w: zarr_format %s in zarr.json", ErrNotImplemented, format)
	}
	var nodeType string
	if err := field(doc, "node_type", &nodeType, true); err != nil {
		return err
	}
	if nodeType != "group" {
		return fmt.Errorf("%w: node_type is %q, not \"group\"", ErrInvalid, nodeType)
	}
	if err := field(doc, "attributes", &g.attrs, false); err != nil {
		return err
	}
	if g.attrs == nil {
		g.attrs = map[string]any{}
	}
	if raw, ok := doc["consolidated_metadata"]; ok && string(raw) != "null" {
		var cm struct {
			Kind     string                     `json:"kind"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if err := decodeJSON(raw, &cm); err != nil {
			return fmt.Errorf("%w (in consolidated_metadata)", err)
		}
		if cm.Kind != "inline" {
			return fmt.Errorf("%w: consolidated metadata of kind %q", ErrNotImplemented, cm.Kind)
		}
		g.consolidated = cm.Metadata
		if g.consolidated == nil {
			g.consolidated = map[string]json.RawMessage{}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		switch k {
		case "zarr_format", "node_type", "attributes", "consolidated_metadata":
			continue
		}
		var ext struct {
			MustUnderstand *bool `json:"must_understand"`
		}
		if decodeJSON(doc[k], &ext) != nil || ext.MustUnderstand == nil || *ext.MustUnderstand {
			return fmt.Errorf("%w: group metadata field %q", ErrNotImplemented, k)
		}
	}
	return nil
}

// Path returns the group's node path ("" for the store root).
func (g *Group) Path() string { return g.path }

// Store returns the store holding the group.
func (g *Group) Store() Store { return g.store }

// ZarrFormat returns 3 or 2.
func (g *Group) ZarrFormat() int { return g.format }

// Attributes returns a copy of the group's attributes; numbers are
// json.Number.
func (g *Group) Attributes() map[string]any { return cloneJSONMap(g.attrs) }

// Consolidated reports whether the group has consolidated metadata, so
// Members and OpenArray read no other metadata document.
func (g *Group) Consolidated() bool { return g.consolidated != nil }

// Members returns the arrays and groups directly inside the group, sorted
// by name: from the consolidated metadata when there is one, else by
// listing the store (which must implement DirLister or Lister).
func (g *Group) Members(ctx context.Context) ([]Member, error) {
	seen := map[string]string{}
	if g.consolidated != nil {
		for k, raw := range g.consolidated {
			if g.format == 3 {
				if strings.Contains(k, "/") {
					continue
				}
				var doc struct {
					NodeType string `json:"node_type"`
				}
				if err := decodeJSON(raw, &doc); err != nil {
					return nil, fmt.Errorf("%w (in consolidated metadata of %q)", err, k)
				}
				seen[k] = doc.NodeType
				continue
			}
			name, doc, ok := strings.Cut(k, "/")
			if !ok || strings.Contains(doc, "/") {
				continue
			}
			switch doc {
			case zarrayKey:
				seen[name] = "array"
			case zgroupKey:
				seen[name] = "group"
			}
		}
	} else {
		prefix := ""
		if g.path != "" {
			prefix = g.path + "/"
		}
		var keys []string
		if dl, ok := g.store.(DirLister); ok {
			_, dirs, err := dl.ListDir(ctx, prefix)
			if err != nil {
				return nil, err
			}
			for _, d := range dirs {
				for _, doc := range []string{metadataKey, zarrayKey, zgroupKey} {
					keys = append(keys, d+doc)
				}
			}
			keys, err = existing(ctx, g.store, keys)
			if err != nil {
				return nil, err
			}
		} else if l, ok := g.store.(Lister); ok {
			var err error
			if keys, err = l.List(ctx, prefix); err != nil {
				return nil, err
			}
		} else {
			return nil, fmt.Errorf("%w: listing the members of group %q needs a store that lists its keys", ErrNotImplemented, g.path)
		}
		for _, k := range keys {
			name, doc, ok := strings.Cut(strings.TrimPrefix(k, prefix), "/")
			if !ok || strings.Contains(doc, "/") {
				continue
			}
			switch doc {
			case metadataKey:
				v, err := g.store.Get(ctx, k)
				if err != nil {
					return nil, err
				}
				var d struct {
					NodeType string `json:"node_type"`
				}
				if err := decodeJSON(v, &d); err != nil {
					return nil, fmt.Errorf("%w (in %s)", err, k)
				}
				seen[name] = d.NodeType
			case zarrayKey:
				if _, v3 := seen[name]; !v3 {
					seen[name] = "array"
				}
			case zgroupKey:
				if _, v3 := seen[name]; !v3 {
					seen[name] = "group"
				}
			}
		}
	}
	out := make([]Member, 0, len(seen))
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, Member{Name: name, NodeType: seen[name]})
	}
	return out, nil
}

// existing returns the keys that exist in s.
func existing(ctx context.Context, s Store, keys []string) ([]string, error) {
	var out []string
	for _, k := range keys {
		_, err := s.Get(ctx, k)
		switch {
		case err == nil:
			out = append(out, k)
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

// OpenArray opens the array name (a path relative to the group) from the
// consolidated metadata when the group has it, else from the store.
func (g *Group) OpenArray(ctx context.Context, name string) (*Array, error) {
	rel, err := cleanNodePath(name)
	if err != nil {
		return nil, err
	}
	full := nodeKey(g.path, rel)
	if g.consolidated == nil {
		return OpenArray(ctx, g.store, full)
	}
	var meta ArrayMetadata
	if g.format == 3 {
		doc, ok := g.consolidated[rel]
		if !ok {
			return nil, fmt.Errorf("%w: no array %q in the consolidated metadata of group %q", ErrNotFound, rel, g.path)
		}
		meta, err = ParseArrayMetadata(doc)
	} else {
		doc, ok := g.consolidated[rel+"/"+zarrayKey]
		if !ok {
			return nil, fmt.Errorf("%w: no array %q in the consolidated metadata of group %q", ErrNotFound, rel, g.path)
		}
		meta, err = ParseArrayMetadataV2(doc, g.consolidated[rel+"/"+zattrsKey])
	}
	if err != nil {
		return nil, fmt.Errorf("%w (in the consolidated metadata of %q)", err, full)
	}
	return newArray(g.store, full, meta)
}

// OpenGroup opens the group name (a path relative to the group) from the
// store.
func (g *Group) OpenGroup(ctx context.Context, name string) (*Group, error) {
	rel, err := cleanNodePath(name)
	if err != nil {
		return nil, err
	}
	return OpenGroup(ctx, g.store, nodeKey(g.path, rel))
}
