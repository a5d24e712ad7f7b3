module mcsimcontrol

go 1.19
